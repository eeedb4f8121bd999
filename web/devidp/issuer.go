package devidp

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Path is where Warden mounts the provider, under its public URL.
const Path = "/dev-idp"

// IssuerFor is the issuer of the provider Warden serves at publicURL:
// the public URL and Path, so every process that shares one public URL
// (WARDEN_PUBLIC_URL) announces one issuer, whichever address it listens
// on. People are principals by (issuer, subject), so the issuer must not
// follow each process's listen address: two processes, each its own
// issuer, would make one demo user two approvers. Without
// WARDEN_PUBLIC_URL the public URL is http://WARDEN_ADDR (with an
// unspecified host read as 127.0.0.1, and port 0 the port actually
// bound), so a process started on another address is another issuer;
// RecordIssuer notices that.
func IssuerFor(publicURL *url.URL) string {
	return strings.TrimSuffix(publicURL.String(), "/") + Path
}

// issuerFile is where a data directory remembers the issuer its
// development provider announced.
const issuerFile = "dev-idp.issuer"

// RecordIssuer remembers issuer as the data directory's development
// issuer and returns the one remembered before, when it was another ("" on
// first start or when unchanged): the caller warns that people who signed
// in through the earlier issuer are other principals now (docs/deploy.md,
// "Changing the issuer").
func RecordIssuer(dataDir, issuer string) (previous string, err error) {
	path := filepath.Join(dataDir, issuerFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("devidp: read %s: %w", path, err)
	case strings.TrimSpace(string(b)) == issuer:
		return "", nil
	default:
		previous = strings.TrimSpace(string(b))
	}
	if err := os.WriteFile(path, []byte(issuer+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("devidp: write %s: %w", path, err)
	}
	return previous, nil
}
