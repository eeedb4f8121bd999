package approvals

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Approver is an earlier approval of an action as dual control reads it:
// the principal, and the issuer and e-mail it signed in with (from the
// principals table; empty for a principal Warden never saw sign in).
type Approver struct {
	ID, Issuer, Email string
}

// ErrSameEmail refuses a second approval by a principal whose e-mail is an
// earlier approver's. A principal is one (issuer, subject), so one person
// is two principals when they sign in through two issuers (an identity
// provider migration, an issuer URL that changed, two development
// replicas each with its own issuer); the e-mail is what still says it is
// the same person. errors.Is matches it whatever the sentence (sameEmail).
var ErrSameEmail = problem.Conflict("same_email", "You already approved this action under another sign-in with the same e-mail; a second approver must be someone else.").
	Titled("You have already approved this action")

// sameEmail is the refusal of p, whose e-mail is that of the earlier
// approver earlier, with a sentence naming the e-mail and how they
// differ.
func sameEmail(p identity.Principal, earlier Approver) error {
	how := "signed in through another issuer"
	if earlier.Issuer == p.Issuer {
		how = "under another account of the same identity provider"
	}
	e := *ErrSameEmail
	e.Message = fmt.Sprintf("You already approved this action as %s %s; a second approver must be someone else.", earlier.Email, how)
	return &e
}

// sameAddress reports whether two e-mail addresses are one, ignoring case
// and surrounding space; an empty address is nobody's.
func sameAddress(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a != "" && strings.EqualFold(a, b)
}

// Approvers lists who approved an action so far, with the issuer and
// e-mail each signed in with, for Check.
func Approvers(ctx context.Context, q store.Querier, actionID string) ([]Approver, error) {
	ids, err := approvers(ctx, q, actionID)
	if err != nil {
		return nil, err
	}
	return WithEmails(ctx, q, ids)
}

// WithEmails gives each principal id its issuer and e-mail, in order.
func WithEmails(ctx context.Context, q store.Querier, ids []string) ([]Approver, error) {
	known, err := principals.EmailsOf(ctx, q, ids)
	if err != nil {
		return nil, fmt.Errorf("approvers: %w", err)
	}
	out := make([]Approver, 0, len(ids))
	for _, id := range ids {
		p := known[id]
		out = append(out, Approver{ID: id, Issuer: p.Issuer, Email: p.Email})
	}
	return out, nil
}
