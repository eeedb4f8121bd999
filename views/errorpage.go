package views

import "strings"

// ErrorView describes an error page.
type ErrorView struct {
	Status  int
	Title   string
	Message string
	// On a 403, who is signed in and the roles they hold, in words, so
	// they know what to ask an admin for.
	SignedInAs string
	YourRoles  []string
}

// rolesSentence says which roles the viewer holds.
func (v ErrorView) rolesSentence() string {
	if len(v.YourRoles) == 0 {
		return "You are signed in as " + v.SignedInAs + ", with no Warden role. Ask an admin to add you to the Warden group of the role you need."
	}
	return "You are signed in as " + v.SignedInAs + " with the " + strings.Join(v.YourRoles, ", ") + " role" + pluralS(len(v.YourRoles)) + "."
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
