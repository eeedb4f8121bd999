package handlers

import (
	"net/url"
	"testing"

	"github.com/wardenhq/warden/views"
)

func TestAmountBound(t *testing.T) {
	tests := []struct {
		raw     string
		want    int64 // minor units, when ok
		ok      bool
		wantNil bool
	}{
		{"", 0, true, true},
		{"0", 0, true, false},
		{"45.5", 4550, true, false},
		{"45.50", 4550, true, false},
		{"$2400", 240000, true, false},
		{"2400.00", 240000, true, false},
		{"0.01", 1, true, false},
		{"1.005", 0, false, true},
		{"1.0000", 100, true, false},
		{"-1", 0, false, true},
		{"1,000", 0, false, true},
		{"ten", 0, false, true},
		{"99999999999999999999", 0, false, true},
	}
	for _, tt := range tests {
		got, msg := amountBound(tt.raw)
		if (msg == "") != tt.ok {
			t.Errorf("amountBound(%q) message = %q, want ok %v", tt.raw, msg, tt.ok)
		}
		if (got == nil) != tt.wantNil {
			t.Errorf("amountBound(%q) = %v, want nil %v", tt.raw, got, tt.wantNil)
		}
		if got != nil && *got != tt.want {
			t.Errorf("amountBound(%q) = %d, want %d", tt.raw, *got, tt.want)
		}
	}
}

func TestApprovalsURL(t *testing.T) {
	tests := []struct {
		f    views.ApprovalFilter
		q    url.Values
		want string
	}{
		{views.ApprovalFilter{}, nil, "/approvals"},
		{views.ApprovalFilter{Sort: "expiry"}, nil, "/approvals"},
		{views.ApprovalFilter{Sort: "amount"}, url.Values{"after": {"Y3Vy"}, "page": {"2"}}, "/approvals?after=Y3Vy&sort=amount"},
		{views.ApprovalFilter{Tenant: "acme", Tool: "issue_refund", Min: "10", Max: "20.5"}, nil, "/approvals?max=20.5&min=10&tenant=acme&tool=issue_refund"},
		{views.ApprovalFilter{Min: "a&b=c"}, url.Values{"before": {"Y3Vy"}}, "/approvals?before=Y3Vy&min=a%26b%3Dc"},
	}
	for _, tt := range tests {
		if got := approvalsURL("/approvals", tt.f, tt.q); got != tt.want {
			t.Errorf("approvalsURL(%+v, %v) = %q, want %q", tt.f, tt.q, got, tt.want)
		}
	}
}

func TestRefusalSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"you requested this action, so someone else must decide it", "You requested this action, so someone else must decide it."},
		{"Already a sentence.", "Already a sentence."},
	}
	for _, tt := range tests {
		if got := refusalSentence(errString(tt.in)); got != tt.want {
			t.Errorf("refusalSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
