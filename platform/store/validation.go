package store

import (
	"sort"
	"strings"

	"github.com/wardenhq/warden/platform/problem"
)

// ValidationError refuses a write because of what a user typed, with one
// sentence per form field to show next to it. Writes return it (possibly
// wrapped; use errors.As) so that a handler can tell a user's mistake,
// which needs a field error, from a failure, which is a 500.
type ValidationError struct {
	Fields map[string]string // form field → what to fix
}

func (e *ValidationError) Error() string {
	fields := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	var b strings.Builder
	b.WriteString("invalid")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" " + f + ": " + e.Fields[f])
	}
	return b.String()
}

// Unwrap makes a validation error a problem too (422, code
// "invalid_input"), so that one that reaches the error handler unrendered
// is shown as what it is, not as a 500.
func (e *ValidationError) Unwrap() error {
	return problem.Unprocessable("invalid_input", "Some fields need another value: "+strings.TrimPrefix(e.Error(), "invalid ")+".")
}
