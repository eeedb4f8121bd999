package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// A port already taken stops start-up with a message that names the
// setting that chooses another.
func TestServePortInUseNamesTheSetting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"serve"}, envMap(map[string]string{
		"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_ADDR": ln.Addr().String(),
	}), &out, &errb)
	if code == 0 {
		t.Fatalf("serve on a taken port exited 0")
	}
	msg := errb.String()
	for _, want := range []string{"already in use", ln.Addr().String(), "WARDEN_ADDR", "--addr"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
}
