package views

import "github.com/wardenhq/warden/approvals"

// ClaimSentence says who is reviewing an action: "Bob Approver is
// reviewing", or "You are reviewing" for the holder.
func ClaimSentence(c approvals.Claim, mine bool) string {
	if mine {
		return "You are reviewing"
	}
	return c.PrincipalName + " is reviewing"
}
