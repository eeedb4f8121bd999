package views

import "github.com/a-h/templ"

// PagerView is the Previous/Next bar under a list: the addresses of the
// neighbouring pages ("" when there is none), their labels and test ids,
// and what stands between them (a count), if anything.
type PagerView struct {
	Prev, Next           string
	PrevLabel, NextLabel string
	PrevTestID           string
	NextTestID           string
	Middle               templ.Component // shown even when there is one page
}
