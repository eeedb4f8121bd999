package runbooks_test

import (
	"testing"

	"github.com/wardenhq/warden/runbooks"
)

// TestOwnersOf: the default runbooks that act on issue_refund name their
// owners, once each; a tool no runbook names has none.
func TestOwnersOf(t *testing.T) {
	set, problems := runbooks.Load(nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var owners []string
	for _, o := range set.OwnersOf("issue_refund", "") {
		owners = append(owners, o.Owner)
	}
	if len(owners) != 2 || !contains(owners, "finance-oncall") || !contains(owners, "platform-oncall") {
		t.Errorf("owners of issue_refund: %v", owners)
	}
	if got := set.OwnersOf("no_such_tool", "no_such_skill"); len(got) != 0 {
		t.Errorf("owners of an unnamed tool: %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
