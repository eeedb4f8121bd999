package approvals

import "testing"

func TestStatusWord(t *testing.T) {
	tests := []struct{ in, want string }{
		{StatusPending, "Awaiting approval"},
		{StatusApproved, "Approved"},
		{StatusExecuting, "Executing"},
		{StatusExecuted, "Executed"},
		{StatusFailed, "Failed"},
		{StatusRejected, "Rejected"},
		{StatusExpired, "Expired"},
		{StatusCancelled, "Cancelled"},
		{"awaiting_approval", "Awaiting approval"},
		{"", "Unknown"},
	}
	for _, tt := range tests {
		if got := StatusWord(tt.in); got != tt.want {
			t.Errorf("StatusWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
