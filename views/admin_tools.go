package views

import "github.com/a-h/templ"

func toolFormAction(v ToolFormView) templ.SafeURL {
	if v.New {
		return "/tools"
	}
	return templ.SafeURL("/tools/" + v.Form.Name)
}
