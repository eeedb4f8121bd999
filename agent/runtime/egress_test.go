package runtime

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

func TestInternalAddresses(t *testing.T) {
	tests := []struct {
		addr     string
		internal bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"0.0.0.0", true}, {"fe80::1", true}, {"fd00::1", true}, {"100.64.0.1", true},
		{"::ffff:127.0.0.1", true}, {"93.184.216.34", false}, {"2606:4700::1111", false}, {"8.8.8.8", false},
	}
	for _, tt := range tests {
		if got := internal(netip.MustParseAddr(tt.addr)); got != tt.internal {
			t.Errorf("internal(%s) = %v, want %v", tt.addr, got, tt.internal)
		}
	}
}

func TestCallbackHostCheck(t *testing.T) {
	prod := &Service{o: Options{}}
	dev := &Service{o: Options{AllowPrivateCallbacks: true}}
	ctx := context.Background()
	for _, host := range []string{"127.0.0.1", "169.254.169.254", "10.0.0.5", "localhost"} {
		if err := prod.checkCallbackHost(ctx, host); err == nil {
			t.Errorf("production accepts a callback to %s", host)
		}
		if err := dev.checkCallbackHost(ctx, host); err != nil {
			t.Errorf("development refuses %s: %v", host, err)
		}
	}
	if err := prod.checkCallbackHost(ctx, "93.184.216.34"); err != nil {
		t.Errorf("production refuses a public address: %v", err)
	}
	// The dialer refuses internal addresses even when the name resolved
	// elsewhere earlier.
	_, err := prod.callbackClient().Post("http://127.0.0.1:9/", "application/json", nil)
	if err == nil || !strings.Contains(err.Error(), "internal") {
		t.Errorf("production callback client dialled loopback: %v", err)
	}
}
