package devidp

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

func TestIssuerFor(t *testing.T) {
	for _, tt := range []struct{ public, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/dev-idp"},
		{"http://localhost:9000/", "http://localhost:9000/dev-idp"},
	} {
		u, err := url.Parse(tt.public)
		if err != nil {
			t.Fatal(err)
		}
		if got := IssuerFor(u); got != tt.want {
			t.Errorf("IssuerFor(%s) = %q, want %q", tt.public, got, tt.want)
		}
	}
}

func TestRecordIssuer(t *testing.T) {
	dir := t.TempDir()
	steps := []struct{ issuer, wantPrevious string }{
		{"http://127.0.0.1:8080/dev-idp", ""},                              // first start
		{"http://127.0.0.1:8080/dev-idp", ""},                              // unchanged
		{"http://127.0.0.1:8081/dev-idp", "http://127.0.0.1:8080/dev-idp"}, // another address
		{"http://127.0.0.1:8081/dev-idp", ""},                              // remembered since
	}
	for i, s := range steps {
		prev, err := RecordIssuer(dir, s.issuer)
		if err != nil || prev != s.wantPrevious {
			t.Errorf("step %d: RecordIssuer(%s) = %q, %v; want %q", i, s.issuer, prev, err, s.wantPrevious)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, issuerFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("issuer file mode %v, want 0600", fi.Mode().Perm())
	}
}
