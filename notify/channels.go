package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// Channel is one place messages go. Its secrets are sealed at rest and
// never leave this package except to be sent where they belong.
type Channel struct {
	ID        string
	Name      string
	Kind      string
	Config    Config
	HasSecret bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// Health as deliveries found it: the last success and failure, the
	// last error (without secrets) and the failures in a row.
	LastOK     time.Time
	LastFailed time.Time
	LastError  string
	Failures   int
}

// Failing reports whether the channel's last delivery failed.
func (c Channel) Failing() bool { return c.Failures > 0 }

// Config is what may be shown of a channel.
type Config struct {
	// E-mail.
	Host     string   `json:"host,omitempty"`
	Port     int      `json:"port,omitempty"`
	TLS      string   `json:"tls,omitempty"`  // starttls or tls
	Auth     string   `json:"auth,omitempty"` // "", plain or login
	Username string   `json:"username,omitempty"`
	From     string   `json:"from,omitempty"`
	To       []string `json:"to,omitempty"`
	// URLShown is the webhook's or API's URL as shown: scheme and host
	// only (a webhook URL's path is its credential).
	URLShown string `json:"url_shown,omitempty"`
}

// Secret is what a channel keeps sealed.
type Secret struct {
	URL           string `json:"url,omitempty"`            // webhook URL, Alertmanager base URL, PagerDuty events URL
	Password      string `json:"password,omitempty"`       // SMTP
	SigningSecret string `json:"signing_secret,omitempty"` // generic webhook
	RoutingKey    string `json:"routing_key,omitempty"`    // PagerDuty integration key
}

// values lists the secret's non-empty values, to scrub from errors.
func (s Secret) values() []string {
	var out []string
	for _, v := range []string{s.URL, s.Password, s.SigningSecret, s.RoutingKey} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// merge keeps old's values where s leaves a field empty: an edit that
// leaves a secret blank keeps it.
func (s Secret) merge(old Secret) Secret {
	if s.URL == "" {
		s.URL = old.URL
	}
	if s.Password == "" {
		s.Password = old.Password
	}
	if s.SigningSecret == "" {
		s.SigningSecret = old.SigningSecret
	}
	if s.RoutingKey == "" {
		s.RoutingKey = old.RoutingKey
	}
	return s
}

// DefaultPagerDutyURL is PagerDuty's Events API v2.
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

// Input is a channel as an admin submits it. Empty secret fields keep the
// channel's current ones on an edit.
type Input struct {
	Name   string
	Kind   string
	Config Config
	Secret Secret
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

// Validate returns one message per bad field, keyed by form field. s is
// the secret the channel will have (the input's merged with the stored
// one).
func Validate(in Input, s Secret) map[string]string {
	errs := map[string]string{}
	if !nameRe.MatchString(in.Name) {
		errs["name"] = "Use 1–48 lower-case letters, digits, dashes or underscores, starting with a letter or digit."
	}
	c := in.Config
	switch in.Kind {
	case Email:
		if c.Host == "" || strings.ContainsAny(c.Host, "/: ") {
			errs["host"] = "Enter the SMTP server's host name, such as smtp.example.com."
		}
		if c.Port < 1 || c.Port > 65535 {
			errs["port"] = "The port is a number from 1 to 65535 (587 for STARTTLS, 465 for TLS)."
		}
		if c.TLS != "starttls" && c.TLS != "tls" {
			errs["tls"] = "Choose STARTTLS or TLS."
		}
		switch c.Auth {
		case "":
		case "plain", "login":
			if c.Username == "" {
				errs["username"] = "Enter the user name to sign in with."
			}
			if s.Password == "" {
				errs["password"] = "Enter the password to sign in with."
			}
		default:
			errs["auth"] = "Choose no authentication, PLAIN or LOGIN."
		}
		if a, err := mail.ParseAddress(c.From); err != nil || a.Address == "" {
			errs["from"] = "Enter the sender's address, such as warden@example.com."
		}
		if len(c.To) == 0 || len(c.To) > 20 {
			errs["to"] = "Enter one to twenty recipients, separated by commas."
		}
		for _, to := range c.To {
			if _, err := mail.ParseAddress(to); err != nil {
				errs["to"] = fmt.Sprintf("%q is not an e-mail address.", clip(to, 80))
				break
			}
		}
	case Slack, Teams, Webhook, Alertmanager, PagerDuty:
		if s.URL == "" && in.Kind != PagerDuty {
			errs["url"] = "Enter the URL."
		} else if s.URL != "" {
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				errs["url"] = "Enter an http or https URL without a user name or password in it."
			}
		}
		if in.Kind == Webhook && len(s.SigningSecret) < 16 {
			errs["signing_secret"] = "Enter a signing secret of at least 16 characters; the receiver verifies every message with it."
		}
		if in.Kind == PagerDuty && s.RoutingKey == "" {
			errs["routing_key"] = "Enter the integration's routing key."
		}
	default:
		errs["kind"] = "Choose a kind of channel."
	}
	return errs
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// shownURL is a URL as a channel shows it: scheme and host.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Errors.
var (
	ErrExists   = problem.Conflict("channel_exists", "There is already a channel of that name.")
	ErrNotFound = problem.NotFound("channel_not_found", "There is no such channel.")
)

const channelColumns = `id, name, kind, config, secret_sealed, created_at, updated_at, last_ok_at, last_failed_at, last_error, failures`

func scanChannel(row store.Scanner) (Channel, string, error) {
	var c Channel
	var config, sealed, created, updated, ok, failed string
	if err := row.Scan(&c.ID, &c.Name, &c.Kind, &config, &sealed, &created, &updated, &ok, &failed, &c.LastError, &c.Failures); err != nil {
		return Channel{}, "", err
	}
	_ = json.Unmarshal([]byte(config), &c.Config)
	c.HasSecret = sealed != ""
	c.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	c.UpdatedAt, _ = time.Parse(time.RFC3339Nano, updated)
	c.LastOK, _ = time.Parse(time.RFC3339Nano, ok)
	c.LastFailed, _ = time.Parse(time.RFC3339Nano, failed)
	return c, sealed, nil
}

func scanChannelOnly(row store.Scanner) (Channel, error) {
	c, _, err := scanChannel(row)
	return c, err
}

// Channels lists every channel by name, without secrets.
func Channels(ctx context.Context, q store.Querier) ([]Channel, error) {
	out, err := store.Query(ctx, q, scanChannelOnly, `SELECT `+channelColumns+` FROM notify_channels ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return out, nil
}

// GetChannel loads one channel by name, without its secret.
func GetChannel(ctx context.Context, q store.Querier, name string) (Channel, error) {
	c, err := store.Get(ctx, q, scanChannelOnly, `SELECT `+channelColumns+` FROM notify_channels WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return Channel{}, ErrNotFound
	}
	return c, err
}

// withSecret loads a channel by id with its secret opened.
func withSecret(ctx context.Context, q store.Querier, sealer *seal.Sealer, id string) (Channel, Secret, error) {
	var sealed string
	c, err := store.Get(ctx, q, func(row store.Scanner) (Channel, error) {
		c, s, err := scanChannel(row)
		sealed = s
		return c, err
	}, `SELECT `+channelColumns+` FROM notify_channels WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Channel{}, Secret{}, ErrNotFound
	}
	if err != nil {
		return Channel{}, Secret{}, err
	}
	var s Secret
	if sealed != "" {
		raw, err := sealer.Open(sealed, c.ID)
		if err != nil {
			return Channel{}, Secret{}, fmt.Errorf("secret of channel %s: %w", c.Name, err)
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return Channel{}, Secret{}, fmt.Errorf("secret of channel %s: %w", c.Name, err)
		}
	}
	return c, s, nil
}

// normalize trims an input and fills what a kind implies.
func normalize(in Input) Input {
	in.Name = strings.TrimSpace(in.Name)
	in.Config.Host = strings.TrimSpace(in.Config.Host)
	in.Config.From = strings.TrimSpace(in.Config.From)
	in.Config.Username = strings.TrimSpace(in.Config.Username)
	var to []string
	for _, t := range in.Config.To {
		if t = strings.TrimSpace(t); t != "" {
			to = append(to, t)
		}
	}
	in.Config.To = to
	in.Secret.URL = strings.TrimSpace(in.Secret.URL)
	in.Secret.RoutingKey = strings.TrimSpace(in.Secret.RoutingKey)
	if in.Kind != Email {
		in.Config = Config{}
	} else {
		in.Secret.URL, in.Secret.SigningSecret, in.Secret.RoutingKey = "", "", ""
	}
	return in
}

// SaveChannel creates the channel named in.Name, or changes it when
// existing is its current name (""), with its audit event
// (notify.channel_created or notify.channel_changed, without secrets).
// The secret is sealed, bound to the channel's id. A validation failure
// is a *store.ValidationError and changes nothing.
func (s *Service) SaveChannel(ctx context.Context, by audit.Actor, existing string, in Input) (Channel, error) {
	in = normalize(in)
	var out Channel
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		var old Channel
		var oldSecret Secret
		if existing != "" {
			c, err := GetChannel(ctx, tx, existing)
			if err != nil {
				return err
			}
			if c.Kind != in.Kind {
				oldSecret = Secret{}
			} else if _, oldSecret, err = withSecret(ctx, tx, s.o.Sealer, c.ID); err != nil {
				return err
			}
			old = c
		}
		secret := in.Secret.merge(oldSecret)
		if in.Kind == PagerDuty && secret.URL == "" {
			secret.URL = DefaultPagerDutyURL
		}
		if errs := Validate(in, secret); len(errs) > 0 {
			return &store.ValidationError{Fields: errs}
		}
		if in.Kind != Email {
			in.Config.URLShown = shownURL(secret.URL)
		}
		if err := s.checkEgress(ctx, in.Kind, in.Config, secret); err != nil {
			return &store.ValidationError{Fields: map[string]string{egressField(in.Kind): err.Error()}}
		}
		config, _ := json.Marshal(in.Config)
		now := s.o.Now().UTC()
		verb := "notify.channel_created"
		id := old.ID
		if id == "" {
			id = "ch_" + store.NewID()
		} else {
			verb = "notify.channel_changed"
		}
		sealed := ""
		if secret != (Secret{}) {
			raw, _ := json.Marshal(secret)
			sealed = s.o.Sealer.Seal(raw, id)
		}
		if old.ID == "" {
			if _, err := GetChannel(ctx, tx, in.Name); err == nil {
				return ErrExists
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO notify_channels (id, name, kind, config, secret_sealed, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, id, in.Name, in.Kind, string(config), sealed, store.FormatTime(now), store.FormatTime(now)); err != nil {
				return fmt.Errorf("create channel %s: %w", in.Name, err)
			}
		} else {
			if in.Name != old.Name {
				if _, err := GetChannel(ctx, tx, in.Name); err == nil {
					return ErrExists
				}
			}
			// A changed channel starts healthy: its failures were the old
			// configuration's.
			if _, err := tx.ExecContext(ctx, `UPDATE notify_channels SET name = ?, kind = ?, config = ?, secret_sealed = ?, updated_at = ?,
				failures = 0, last_error = '' WHERE id = ?`, in.Name, in.Kind, string(config), sealed, store.FormatTime(now), id); err != nil {
				return fmt.Errorf("change channel %s: %w", in.Name, err)
			}
		}
		details := map[string]any{"name": in.Name, "kind": in.Kind}
		if in.Kind == Email {
			details["host"], details["port"], details["recipients"] = in.Config.Host, in.Config.Port, len(in.Config.To)
		} else {
			details["url"] = in.Config.URLShown
		}
		if _, err := audit.Append(ctx, tx, audit.Event{Actor: by, Verb: verb, Subject: audit.Subject{Type: "notify_channel", ID: id}, Details: details}); err != nil {
			return err
		}
		c, err := GetChannel(ctx, tx, in.Name)
		out = c
		return err
	})
	return out, err
}

func egressField(kind string) string {
	if kind == Email {
		return "host"
	}
	return "url"
}

// DeleteChannel deletes a channel, its routes and its pending deliveries
// (their jobs find nothing to send), with notify.channel_deleted.
func (s *Service) DeleteChannel(ctx context.Context, by audit.Actor, name string) error {
	return s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		c, err := GetChannel(ctx, tx, name)
		if err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM notify_routes WHERE channel_id = ?`, `DELETE FROM notify_deliveries WHERE channel_id = ?`,
			`DELETE FROM notify_pages WHERE channel_id = ?`, `DELETE FROM notify_channels WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, c.ID); err != nil {
				return fmt.Errorf("delete channel %s: %w", name, err)
			}
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: by, Verb: "notify.channel_deleted",
			Subject: audit.Subject{Type: "notify_channel", ID: c.ID}, Details: map[string]any{"name": c.Name, "kind": c.Kind}})
		return err
	})
}

// recordResult keeps a channel's health after a delivery or test.
func recordResult(ctx context.Context, q *store.Tx, channelID string, now time.Time, sendErr error) error {
	var err error
	if sendErr == nil {
		_, err = q.ExecContext(ctx, `UPDATE notify_channels SET last_ok_at = ?, failures = 0 WHERE id = ?`, store.FormatTime(now), channelID)
	} else {
		_, err = q.ExecContext(ctx, `UPDATE notify_channels SET last_failed_at = ?, last_error = ?, failures = failures + 1 WHERE id = ?`,
			store.FormatTime(now), clip(sendErr.Error(), 500), channelID)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("record channel health: %w", err)
	}
	return nil
}

// splitList reads a comma- or line-separated list.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ';' }) {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// SplitList reads a comma- or line-separated list, as forms send
// recipients and tools.
func SplitList(s string) []string { return splitList(s) }
