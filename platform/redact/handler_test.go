package redact

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"
)

type testUser struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Card  string `json:"card"`
}

// secretValuer logs as a group holding a virtual key.
type secretValuer struct{ key string }

func (v secretValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("k", v.key), slog.Int("n", 1))
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestHandler(t *testing.T) {
	const (
		card  = "4111 1111 1111 1111"
		email = "jane.doe@example.com"
		wk    = "wk_Z3kP9qL2mX8vR4tY6wB1nC5d"
	)
	var buf bytes.Buffer
	r := New(testKey)
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), r))
	log = log.With("tenant", "acme", "requester", email).WithGroup("req").With(slog.String("auth", "Bearer "+wk))
	log.Info("refund to "+card+" for "+email,
		"key", wk,
		"user", testUser{Name: "Jane", Email: email, Card: card},
		"ptr", &testUser{Email: email},
		slog.Group("payment", slog.String("note", "card "+card), slog.Group("deep", slog.String("who", email))),
		slog.Any("err", errors.New("declined: "+card)),
		slog.Any("valuer", secretValuer{key: wk}),
		slog.Any("stringer", stringer{"mail " + email}),
		slog.Any("ip", netip.MustParseAddr("203.0.113.42")),
		slog.Int64("number", 4111111111111111),
		slog.Int("count", 3),
		slog.Duration("took", 245*time.Millisecond),
		slog.String("order", "ORD-2024-00917"),
		slog.Any("map", map[string]any{"cardNumber": "4111111111111112", "note": email}),
	)
	out := buf.String()
	for _, leak := range []string{card, "4111111111111111", email, "jane.doe", wk, "203.0.113.42", "Z3kP9qL2"} {
		if strings.Contains(out, leak) {
			t.Errorf("log output holds %q:\n%s", leak, out)
		}
	}
	for _, keep := range []string{`"tenant":"acme"`, `"count":3`, `"order":"ORD-2024-00917"`, `"took":245000000`, `"name":"Jane"`, r.String(email), `"auth":"` + r.Token("secret", wk)} {
		if !strings.Contains(out, keep) {
			t.Errorf("log output lacks %s:\n%s", keep, out)
		}
	}
}

func TestHandlerSensitiveNames(t *testing.T) {
	var buf bytes.Buffer
	r := New(testKey)
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}), r))
	log.WithGroup("billing_address").Info("m", "line1", "1 Main St", "zip", 94107)
	log.Info("m", "password", "hunter2", "pin", 1234, "dob", time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC),
		slog.Group("credentials", "user", "bob", "pass", "x"), "ok", true)
	got := kinds(buf.String())
	want := `{"level":"INFO","msg":"m","billing_address":{"line1":"[address]","zip":"[address]"}}
{"level":"INFO","msg":"m","password":"[secret]","pin":"[secret]","dob":"[dob]","credentials":{"user":"[secret]","pass":"[secret]"},"ok":true}
`
	if got != want {
		t.Errorf("log output =\n%s\nwant\n%s", got, want)
	}
}

func TestHandlerEnabled(t *testing.T) {
	h := NewHandler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), New(testKey))
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Errorf("Enabled does not follow the wrapped handler's level")
	}
}
