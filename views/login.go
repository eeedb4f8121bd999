package views

import "net/url"

func loginURL(next string) string {
	if next == "" || next == "/" {
		return "/auth/login"
	}
	return "/auth/login?next=" + url.QueryEscape(next)
}
