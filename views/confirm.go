package views

import "github.com/a-h/templ"

// ConfirmView is a page that asks before a change takes effect: freezing a
// tenant, revoking a key, rotating a callback secret, switching a tool off,
// requesting a reversal. Each of those pages fills one in and renders it
// with Confirm, so they all read the same way: the question, anything that
// makes confirming unusual right now, what confirming does, and one button
// that does it. Opening the page changes nothing; only the POST to Action
// does.
//
//	templ KeyRevokeConfirm(p Page, v KeyRevokeView) {
//		@Confirm(p, v.confirm())
//	}
type ConfirmView struct {
	Back      templ.SafeURL   // optional link above the question…
	BackLabel string          // …and its text
	Title     templ.Component // the question; text(s) when it is plain text
	Summary   string          // optional: what is being changed, under the question
	Facts     templ.Component // optional: a summary that holds times (shown with @at)
	Warning   templ.Component // optional: why confirming now does nothing, or more than usual
	WarningID string          // the warning's data-testid, when it needs one
	Effect    templ.Component // what confirming does, in one paragraph
	More      templ.Component // optional, between the effect and the buttons
	Fields    templ.Component // optional inputs posted with the button (a required reason)
	Action    templ.SafeURL   // where the form posts
	Submit    string          // the button's label
	SubmitID  string          // the button's data-testid; "confirm-submit" when empty
	Danger    bool            // a red button: confirming stops or takes away something
	Cancel    templ.SafeURL   // where Cancel leads
}

func (v ConfirmView) submitClass() string {
	if v.Danger {
		return "btn btn-danger"
	}
	return "btn btn-primary"
}

func (v ConfirmView) submitID() string {
	if v.SubmitID == "" {
		return "confirm-submit"
	}
	return v.SubmitID
}

// testID is a data-testid attribute, or none when id is empty.
func testID(id string) templ.Attributes {
	if id == "" {
		return nil
	}
	return templ.Attributes{"data-testid": id}
}
