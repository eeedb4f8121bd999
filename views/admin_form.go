package views

import "github.com/a-h/templ"

// FieldErrors maps a form field's name to what is wrong with its value, so
// a form can show each message next to its input.
type FieldErrors map[string]string

// fieldAria links an input to its help text and error message for screen
// readers, and marks it invalid when it has an error.
func fieldAria(errs FieldErrors, id, name string, help bool) templ.Attributes {
	a := templ.Attributes{}
	var by string
	if help {
		by = id + "-help"
	}
	if errs[name] != "" {
		a["aria-invalid"] = "true"
		if by != "" {
			by += " "
		}
		by += id + "-error"
	}
	if by != "" {
		a["aria-describedby"] = by
	}
	return a
}

func pluralFields(n int) string {
	if n == 1 {
		return "field"
	}
	return "fields"
}
