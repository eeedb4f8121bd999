// Package sign signs outbound webhooks the way docs/api.md documents for
// callbacks, so a receiver verifies every Warden webhook (an agent's
// callback, a notification) with one function:
//
//	X-Warden-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]
//
// where each v1 is the hex HMAC-SHA256 over "<t>.<body>" keyed by one
// secret (the whole "whsec_…" string). The receiver refuses a t more than
// five minutes from its clock, then accepts when any v1 matches.
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Header is the header that carries the signature.
const Header = "X-Warden-Signature"

// Sign returns the signature header value for body at t, with one v1 for
// each secret, in the order given.
func Sign(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(mac.Sum(nil)))
	}
	return b.String()
}

// ReplayWindow is how far from the receiver's clock a signature's t may
// be.
const ReplayWindow = 5 * time.Minute

// Verify reports whether header signs body with secret, at a t within
// ReplayWindow of now: what docs/api.md asks a receiver to check.
func Verify(secret, header string, body []byte, now time.Time) bool {
	var ts string
	var macs []string
	for part := range strings.SplitSeq(header, ",") {
		name, value, _ := strings.Cut(part, "=")
		switch name {
		case "t":
			ts = value
		case "v1":
			macs = append(macs, value)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > ReplayWindow || d < -ReplayWindow {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	ok := false
	for _, m := range macs {
		if hmac.Equal([]byte(want), []byte(m)) {
			ok = true
		}
	}
	return ok
}
