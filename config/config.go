// Package config reads and validates Warden's settings from environment
// variables and command-line flags. Every bad setting is reported on its own
// line naming the setting, and Warden refuses to start.
package config

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/identity"
)

// Config is the validated configuration of one Warden process.
type Config struct {
	Addr      string // listen address, host:port
	DataDir   string // absolute data directory
	PublicURL *url.URL

	// DatabaseURL is empty for SQLite in DataDir (the default), or a
	// postgres:// URL; the DB settings apply to PostgreSQL only
	// (docs/deploy.md).
	DatabaseURL        string
	DBMaxConns         int
	DBStatementTimeout time.Duration // 0: the server's own
	DBConnectTimeout   time.Duration

	// OIDC. An empty issuer selects development mode: Warden serves its own
	// identity provider under /dev-idp and binds to loopback only.
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	OIDCRedirectURL  string
	OIDCGroupsClaim  string
	RoleMapping      map[string]string // group → role
	TenantPrefix     string            // group prefix that grants a tenant; prefix+"*" grants all
	// OIDCScopes are the scopes asked for at sign-in; "openid" is always
	// among them.
	OIDCScopes []string
	// OIDCTokenAuth is how the client authenticates at the token endpoint:
	// TokenAuthBasic, TokenAuthPost, TokenAuthAuto, or "" to take it from
	// the provider's discovery document.
	OIDCTokenAuth string

	// SessionIdle ends a session nobody used for this long; SessionMax
	// ends every session this long after its sign-in.
	SessionIdle time.Duration
	SessionMax  time.Duration

	// Session keys: hash (signing, 32 or 64 bytes) and block (AES-256
	// encryption, 32 bytes). Empty means generate and keep in DataDir.
	SessionHashKey  []byte
	SessionBlockKey []byte

	// Installation keys given as settings, for replicas that must share
	// them (docs/deploy.md); nil means the file in DataDir, generated on
	// first start.
	SealingKey      []byte // seals stored secrets (platform/seal), 32 bytes
	RedactionKey    []byte // keys redaction tokens (platform/redact), 32 bytes
	AuditSigningKey []byte // Ed25519 seed that signs checkpoints and exports, 32 bytes

	ShutdownGrace time.Duration
	DrainDelay    time.Duration // readiness is 503 this long before the listener closes

	// AuditCheckpointInterval is how often serve signs the audit chain's
	// head and stores it as a checkpoint (docs/audit-format.md).
	AuditCheckpointInterval time.Duration

	// AlertInterval is how often the runtime evaluates alert rules
	// (docs/alerts.md).
	AlertInterval time.Duration

	// Model prices, in micro-units per token, charged for journeys.
	PriceInputTokenMicros  int64
	PriceOutputTokenMicros int64

	// RunbookDir holds runbooks added to the embedded ones (docs/runbooks.md);
	// empty for the embedded ones only.
	RunbookDir string

	// BreakGlass lets one admin apply a loosening change at once, with a
	// reason, instead of waiting for a second admin (docs/changes.md).
	BreakGlass bool

	// SkillDir holds skills, a directory with a SKILL.md each, added to the
	// embedded ones or replacing one by name (docs/skills.md); empty for the
	// embedded ones only.
	SkillDir string

	// RouterModel is the model alias that routes journeys among the
	// skills (docs/models.md); empty for the lexical router alone, which
	// also decides whenever the model cannot.
	RouterModel string

	// APIMaxInFlight bounds the agent API writes admitted at once (load
	// shedding); TenantRate the requests per second of one tenant.
	APIMaxInFlight int
	TenantRate     int

	// MetricsToken lets a scraper on another host read /metrics; loopback
	// needs none.
	MetricsToken string

	// CORSOrigins are the browser origins (scheme://host[:port]) allowed
	// to call the agents' API (/v1/*) across origins; empty allows none.
	// The console never answers CORS.
	CORSOrigins []string
	// OTLPEndpoint is the OTLP/HTTP collector traces are sent to (such
	// as http://localhost:4318); empty sends none (docs/tracing.md).
	// OTLPHeaders go with every export (a collector's credentials).
	OTLPEndpoint string
	OTLPHeaders  map[string]string

	publicURLDefaulted, redirectDefaulted bool
}

// WithListenAddr returns c with the public and redirect URLs derived from
// the address actually listened on, when they were not set explicitly (so
// port 0 works).
func (c Config) WithListenAddr(addr string) Config {
	if !c.publicURLDefaulted {
		return c
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return c
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	u := *c.PublicURL
	u.Host = net.JoinHostPort(host, port)
	c.PublicURL = &u
	if c.redirectDefaulted {
		c.OIDCRedirectURL = u.String() + "/auth/callback"
	}
	return c
}

// DevMode reports whether Warden runs with its development identity provider.
func (c Config) DevMode() bool { return c.OIDCIssuer == "" }

// Secure reports whether cookies must be marked Secure and HSTS sent.
func (c Config) Secure() bool { return c.PublicURL.Scheme == "https" }

// DefaultRoleMapping maps the groups the development provider emits, and
// that a real provider can be configured to emit, onto roles.
const DefaultRoleMapping = "warden-approver=approver,warden-oncall=oncall,warden-auditor=auditor,warden-admin=admin"

// Values of WARDEN_OIDC_TOKEN_AUTH. Empty takes the method from the
// provider's token_endpoint_auth_methods_supported.
const (
	TokenAuthBasic = "basic" // client_secret_basic: HTTP Basic authentication
	TokenAuthPost  = "post"  // client_secret_post: id and secret in the form
	TokenAuthAuto  = "auto"  // basic, then post if the provider refuses the client; decided per sign-in, never cached
)

// DefaultOIDCScopes are the scopes asked for when WARDEN_OIDC_SCOPES is unset.
const DefaultOIDCScopes = "openid profile email groups"

// Bounds of WARDEN_SESSION_IDLE and WARDEN_SESSION_MAX.
const (
	MinSessionIdle = time.Minute
	MaxSessionMax  = 30 * 24 * time.Hour
)

// Bounds of WARDEN_AUDIT_CHECKPOINT_INTERVAL.
const (
	MinAuditCheckpointInterval = time.Second
	MaxAuditCheckpointInterval = 24 * time.Hour
)

// Bounds of WARDEN_ALERT_INTERVAL.
const (
	MinAlertInterval = time.Second
	MaxAlertInterval = time.Hour
)

// setting describes one configuration name: its variable, flag and default.
type setting struct {
	env, flag, def, usage string
}

var settings = []setting{
	{"WARDEN_ADDR", "addr", "127.0.0.1:8080", "listen address (host:port)"},
	{"WARDEN_DATA_DIR", "data-dir", "./warden-data", "data directory (created 0700)"},
	{"WARDEN_DATABASE_URL", "database-url", "", "postgres://… to keep the data in PostgreSQL (default: SQLite in the data directory)"},
	{"WARDEN_DB_MAX_CONNS", "db-max-conns", "20", "PostgreSQL connections this process opens at most (1 to 1000)"},
	{"WARDEN_DB_STATEMENT_TIMEOUT", "db-statement-timeout", "30s", "PostgreSQL cancels a statement that runs longer (0 for the server's setting)"},
	{"WARDEN_DB_CONNECT_TIMEOUT", "db-connect-timeout", "10s", "how long connecting to PostgreSQL may take (1s or more)"},
	{"WARDEN_PUBLIC_URL", "public-url", "", "URL users reach Warden at (default http://ADDR)"},
	{"WARDEN_OIDC_ISSUER", "oidc-issuer", "", "OIDC issuer URL; empty runs the development identity provider"},
	{"WARDEN_OIDC_CLIENT_ID", "oidc-client-id", "", "OIDC client id"},
	{"WARDEN_OIDC_CLIENT_SECRET", "oidc-client-secret", "", "OIDC client secret"},
	{"WARDEN_OIDC_REDIRECT_URL", "oidc-redirect-url", "", "OIDC redirect URL (default PUBLIC_URL/auth/callback)"},
	{"WARDEN_OIDC_GROUPS_CLAIM", "oidc-groups-claim", "groups", "ID token claim that lists the user's groups"},
	{"WARDEN_OIDC_ROLE_MAPPING", "oidc-role-mapping", DefaultRoleMapping, "group=role pairs, comma separated"},
	{"WARDEN_OIDC_TENANT_PREFIX", "oidc-tenant-prefix", "warden-tenant-", "group prefix granting a tenant (PREFIX* grants all)"},
	{"WARDEN_OIDC_SCOPES", "oidc-scopes", DefaultOIDCScopes, "scopes asked for at sign-in, space separated; must include openid"},
	{"WARDEN_OIDC_TOKEN_AUTH", "oidc-token-auth", "", "token endpoint client authentication: basic, post or auto (default: from the provider's discovery document)"},
	{"WARDEN_SESSION_IDLE", "session-idle", "30m", "a console session unused this long ends (1m or more, at most WARDEN_SESSION_MAX)"},
	{"WARDEN_SESSION_MAX", "session-max", "12h", "a console session ends this long after sign-in, used or not (at most 720h)"},
	{"WARDEN_SESSION_HASH_KEY", "session-hash-key", "", "hex server key, 32 or 64 bytes: signs the sign-in cookie and derives CSRF tokens (default generated)"},
	{"WARDEN_SESSION_BLOCK_KEY", "session-block-key", "", "hex session encryption key, 32 bytes (default generated)"},
	{"WARDEN_SESSION_HASH_KEY_FILE", "session-hash-key-file", "", "file holding WARDEN_SESSION_HASH_KEY (hex), such as a mounted secret"},
	{"WARDEN_SESSION_BLOCK_KEY_FILE", "session-block-key-file", "", "file holding WARDEN_SESSION_BLOCK_KEY (hex)"},
	{"WARDEN_SEALING_KEY", "sealing-key", "", "hex key, 32 bytes, that seals stored secrets such as pending actions' arguments (default DATA_DIR/sealing.key, generated)"},
	{"WARDEN_SEALING_KEY_FILE", "sealing-key-file", "", "file holding WARDEN_SEALING_KEY (hex)"},
	{"WARDEN_REDACTION_KEY", "redaction-key", "", "hex key, 32 bytes, behind redaction tokens (default DATA_DIR/redaction.key, generated)"},
	{"WARDEN_REDACTION_KEY_FILE", "redaction-key-file", "", "file holding WARDEN_REDACTION_KEY (hex)"},
	{"WARDEN_AUDIT_SIGNING_KEY", "audit-signing-key", "", "hex Ed25519 seed, 32 bytes, that signs audit checkpoints and exports (default DATA_DIR/audit-signing.key, generated)"},
	{"WARDEN_AUDIT_SIGNING_KEY_FILE", "audit-signing-key-file", "", "file holding WARDEN_AUDIT_SIGNING_KEY (hex)"},
	{"WARDEN_SHUTDOWN_GRACE", "shutdown-grace", "15s", "how long in-flight requests may take to finish on shutdown"},
	{"WARDEN_DRAIN_DELAY", "drain-delay", "1s", "how long readiness reports 503 before the listener closes on shutdown"},
	{"WARDEN_AUDIT_CHECKPOINT_INTERVAL", "audit-checkpoint-interval", "1h", "how often the audit chain's head is signed and stored as a checkpoint (1s to 24h)"},
	{"WARDEN_ALERT_INTERVAL", "alert-interval", "1m", "how often alert rules are evaluated (1s to 1h)"},
	{"WARDEN_PRICE_INPUT_TOKEN", "price-input-token", "2", "price of one input token, in micro-units of the budget currency"},
	{"WARDEN_PRICE_OUTPUT_TOKEN", "price-output-token", "8", "price of one output token, in micro-units of the budget currency"},
	{"WARDEN_BREAK_GLASS", "break-glass", "false", "true lets one admin apply a loosening change at once with a reason (recorded as break_glass, pages on-call); false needs a second admin"},
	{"WARDEN_RUNBOOK_DIR", "runbook-dir", "", "directory of runbook documents (*.md) added to the built-in ones"},
	{"WARDEN_SKILL_DIR", "skill-dir", "", "directory of skills (one sub-directory with a SKILL.md each) added to the built-in ones"},
	{"WARDEN_ROUTER_MODEL", "router-model", "", "model alias that routes journeys among the skills; empty for the lexical router (the fallback when the model cannot answer)"},
	{"WARDEN_API_MAX_INFLIGHT", "api-max-inflight", "64", "agent API writes admitted at once; more are shed with 503 (1 to 100000)"},
	{"WARDEN_TENANT_RATE", "tenant-rate", "1000", "agent API requests per second per tenant, across its keys (1 to 1000000)"},
	{"WARDEN_METRICS_TOKEN", "metrics-token", "", "bearer token a Prometheus scraper sends for /metrics from another host (loopback needs none)"},
	{"WARDEN_CORS_ORIGINS", "cors-origins", "", "browser origins (https://app.example.com) allowed to call /v1/* across origins, comma separated; empty allows none (never the console)"},
	{"WARDEN_OTLP_ENDPOINT", "otlp-endpoint", "", "OTLP/HTTP collector base URL traces are sent to, such as http://localhost:4318 (empty: no traces)"},
	{"WARDEN_OTLP_HEADERS", "otlp-headers", "", "headers sent with every trace export, key=value pairs, comma separated, values percent-encoded (such as Authorization=Basic%20...)"},
}

// Load reads settings from env (a lookup such as os.LookupEnv) and args
// (flags win over environment), validates them, prepares the data
// directory and returns the configuration or an error with one line per
// bad setting.
func Load(args []string, env func(string) (string, bool)) (Config, error) {
	fs := flag.NewFlagSet("warden serve", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	vals := make(map[string]*string, len(settings))
	for _, s := range settings {
		def := s.def
		if v, ok := env(s.env); ok {
			def = v
		}
		vals[s.env] = fs.String(s.flag, def, s.usage+" ("+s.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("command line: %v", err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("command line: unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) string { return strings.TrimSpace(*vals[name]) }

	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...)))
	}

	var c Config
	c.OIDCIssuer = get("WARDEN_OIDC_ISSUER")

	c.Addr = get("WARDEN_ADDR")
	host, port, err := net.SplitHostPort(c.Addr)
	switch {
	case err != nil:
		bad("WARDEN_ADDR", "%q is not host:port", c.Addr)
	case !validPort(port):
		bad("WARDEN_ADDR", "port %q is not a number from 0 to 65535", port)
	case c.DevMode() && !isLoopback(host):
		bad("WARDEN_ADDR", "development mode (no WARDEN_OIDC_ISSUER) listens on loopback only; %q is not a loopback address", host)
	}

	if pub := get("WARDEN_PUBLIC_URL"); pub != "" {
		u, err := parseHTTPURL(pub)
		if err != nil {
			bad("WARDEN_PUBLIC_URL", "%v", err)
		} else if strings.Trim(u.Path, "/") != "" {
			bad("WARDEN_PUBLIC_URL", "%q has a path; Warden serves from the root of its host", pub)
		} else {
			u.Path = ""
			c.PublicURL = u
			if c.DevMode() && !isLoopback(u.Hostname()) {
				bad("WARDEN_PUBLIC_URL", "development mode serves loopback only; %q is not a loopback host", u.Hostname())
			}
		}
	} else if err == nil {
		h := host
		if h == "" || h == "0.0.0.0" || h == "::" {
			h = "127.0.0.1"
		}
		c.PublicURL = &url.URL{Scheme: "http", Host: net.JoinHostPort(h, port)}
		c.publicURLDefaulted = true
	}

	if !c.DevMode() {
		if _, err := parseHTTPURL(c.OIDCIssuer); err != nil {
			bad("WARDEN_OIDC_ISSUER", "%v", err)
		}
		c.OIDCClientID = get("WARDEN_OIDC_CLIENT_ID")
		if c.OIDCClientID == "" {
			bad("WARDEN_OIDC_CLIENT_ID", "required when WARDEN_OIDC_ISSUER is set")
		}
		c.OIDCClientSecret = get("WARDEN_OIDC_CLIENT_SECRET")
	}
	c.OIDCRedirectURL = get("WARDEN_OIDC_REDIRECT_URL")
	if c.OIDCRedirectURL != "" {
		if _, err := parseHTTPURL(c.OIDCRedirectURL); err != nil {
			bad("WARDEN_OIDC_REDIRECT_URL", "%v", err)
		}
	} else if c.PublicURL != nil {
		c.OIDCRedirectURL = strings.TrimRight(c.PublicURL.String(), "/") + "/auth/callback"
		c.redirectDefaulted = true
	}

	c.OIDCGroupsClaim = get("WARDEN_OIDC_GROUPS_CLAIM")
	if c.OIDCGroupsClaim == "" {
		bad("WARDEN_OIDC_GROUPS_CLAIM", "must not be empty")
	}
	c.RoleMapping, err = parseRoleMapping(get("WARDEN_OIDC_ROLE_MAPPING"))
	if err != nil {
		bad("WARDEN_OIDC_ROLE_MAPPING", "%v", err)
	}
	c.TenantPrefix = get("WARDEN_OIDC_TENANT_PREFIX")
	if c.TenantPrefix == "" {
		bad("WARDEN_OIDC_TENANT_PREFIX", "must not be empty")
	}

	c.OIDCScopes, err = parseScopes(get("WARDEN_OIDC_SCOPES"))
	if err != nil {
		bad("WARDEN_OIDC_SCOPES", "%v", err)
	}
	switch c.OIDCTokenAuth = strings.ToLower(get("WARDEN_OIDC_TOKEN_AUTH")); c.OIDCTokenAuth {
	case "", TokenAuthBasic, TokenAuthPost, TokenAuthAuto:
	default:
		bad("WARDEN_OIDC_TOKEN_AUTH", "%q is not basic, post or auto (or empty to follow the provider's discovery document)", get("WARDEN_OIDC_TOKEN_AUTH"))
	}

	c.SessionMax, err = time.ParseDuration(get("WARDEN_SESSION_MAX"))
	if err != nil || c.SessionMax < MinSessionIdle || c.SessionMax > MaxSessionMax {
		bad("WARDEN_SESSION_MAX", "%q is not a duration from %v to %v, such as 12h", get("WARDEN_SESSION_MAX"), MinSessionIdle, MaxSessionMax)
	}
	c.SessionIdle, err = time.ParseDuration(get("WARDEN_SESSION_IDLE"))
	switch {
	case err != nil || c.SessionIdle < MinSessionIdle:
		bad("WARDEN_SESSION_IDLE", "%q is not a duration of at least %v, such as 30m", get("WARDEN_SESSION_IDLE"), MinSessionIdle)
	case c.SessionMax > 0 && c.SessionIdle > c.SessionMax:
		bad("WARDEN_SESSION_IDLE", "%v is longer than WARDEN_SESSION_MAX (%v)", c.SessionIdle, c.SessionMax)
	}

	c.SessionHashKey = hexKey(get, bad, "WARDEN_SESSION_HASH_KEY", 32, 64)
	c.SessionBlockKey = hexKey(get, bad, "WARDEN_SESSION_BLOCK_KEY", 32)
	parseKeys(&c, get, bad)
	if (c.SessionHashKey == nil) != (c.SessionBlockKey == nil) {
		bad("WARDEN_SESSION_HASH_KEY", "set both WARDEN_SESSION_HASH_KEY and WARDEN_SESSION_BLOCK_KEY, or neither")
	}

	c.ShutdownGrace, err = time.ParseDuration(get("WARDEN_SHUTDOWN_GRACE"))
	if err != nil || c.ShutdownGrace <= 0 {
		bad("WARDEN_SHUTDOWN_GRACE", "%q is not a positive duration such as 15s", get("WARDEN_SHUTDOWN_GRACE"))
	}

	parseDatabase(&c, get, bad)

	c.DrainDelay, err = time.ParseDuration(get("WARDEN_DRAIN_DELAY"))
	if err != nil || c.DrainDelay < 0 {
		bad("WARDEN_DRAIN_DELAY", "%q is not a duration such as 1s", get("WARDEN_DRAIN_DELAY"))
	}

	// A checkpoint is what exposes events cut from the end of the audit
	// chain; a day is the most the trail may go without one.
	c.AuditCheckpointInterval, err = time.ParseDuration(get("WARDEN_AUDIT_CHECKPOINT_INTERVAL"))
	if err != nil || c.AuditCheckpointInterval < MinAuditCheckpointInterval || c.AuditCheckpointInterval > MaxAuditCheckpointInterval {
		bad("WARDEN_AUDIT_CHECKPOINT_INTERVAL", "%q is not a duration from %v to %v, such as 1h",
			get("WARDEN_AUDIT_CHECKPOINT_INTERVAL"), MinAuditCheckpointInterval, MaxAuditCheckpointInterval)
	}

	if c.BreakGlass, err = strconv.ParseBool(get("WARDEN_BREAK_GLASS")); err != nil {
		bad("WARDEN_BREAK_GLASS", "%q is not true or false", get("WARDEN_BREAK_GLASS"))
	}

	c.AlertInterval, err = time.ParseDuration(get("WARDEN_ALERT_INTERVAL"))
	if err != nil || c.AlertInterval < MinAlertInterval || c.AlertInterval > MaxAlertInterval {
		bad("WARDEN_ALERT_INTERVAL", "%q is not a duration from %v to %v, such as 1m",
			get("WARDEN_ALERT_INTERVAL"), MinAlertInterval, MaxAlertInterval)
	}

	for _, pr := range []struct {
		name string
		dst  *int64
	}{{"WARDEN_PRICE_INPUT_TOKEN", &c.PriceInputTokenMicros}, {"WARDEN_PRICE_OUTPUT_TOKEN", &c.PriceOutputTokenMicros}} {
		n, err := strconv.ParseInt(get(pr.name), 10, 64)
		if err != nil || n < 0 || n > 1_000_000_000 {
			bad(pr.name, "%q is not a whole number of micro-units from 0 to 1000000000", get(pr.name))
		}
		*pr.dst = n
	}

	for _, n := range []struct {
		name     string
		dst      *int
		min, max int
	}{
		{"WARDEN_API_MAX_INFLIGHT", &c.APIMaxInFlight, 1, 100000},
		{"WARDEN_TENANT_RATE", &c.TenantRate, 1, 1000000},
	} {
		v, err := strconv.Atoi(get(n.name))
		if err != nil || v < n.min || v > n.max {
			bad(n.name, "%q is not a whole number from %d to %d", get(n.name), n.min, n.max)
		}
		*n.dst = v
	}

	c.MetricsToken = get("WARDEN_METRICS_TOKEN")
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		bad("WARDEN_METRICS_TOKEN", "must be at least 16 characters")
	}

	for _, o := range strings.Split(get("WARDEN_CORS_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if why := badOrigin(o); why != "" {
			bad("WARDEN_CORS_ORIGINS", "%q %s", o, why)
			continue
		}
		if !slices.Contains(c.CORSOrigins, o) {
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
	}
	parseOTLP(&c, get, bad)

	if rd := get("WARDEN_RUNBOOK_DIR"); rd != "" {
		abs, err := filepath.Abs(rd)
		if fi, serr := os.Stat(abs); err != nil || serr != nil || !fi.IsDir() {
			bad("WARDEN_RUNBOOK_DIR", "%q is not a directory", rd)
		}
		c.RunbookDir = abs
	}

	if sd := get("WARDEN_SKILL_DIR"); sd != "" {
		abs, err := filepath.Abs(sd)
		if fi, serr := os.Stat(abs); err != nil || serr != nil || !fi.IsDir() {
			bad("WARDEN_SKILL_DIR", "%q is not a directory", sd)
		}
		c.SkillDir = abs
	}
	c.RouterModel = get("WARDEN_ROUTER_MODEL")

	dir := get("WARDEN_DATA_DIR")
	if dir == "" {
		bad("WARDEN_DATA_DIR", "must not be empty")
	} else if abs, err := prepareDataDir(dir); err != nil {
		bad("WARDEN_DATA_DIR", "%v", err)
	} else {
		c.DataDir = abs
	}

	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// Usage prints the flags with their environment names.
func Usage() string {
	var b strings.Builder
	b.WriteString("Settings (flag, environment variable, default):\n")
	flagWidth, envWidth := 0, 0
	for _, s := range settings {
		flagWidth, envWidth = max(flagWidth, len(s.flag)), max(envWidth, len(s.env))
	}
	for _, s := range settings {
		fmt.Fprintf(&b, "  --%-*s %-*s %s", flagWidth, s.flag, envWidth, s.env, s.usage)
		if s.def != "" {
			fmt.Fprintf(&b, " [%s]", s.def)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
	}
	return n <= 65535
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseHTTPURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q must not have a query or fragment", s)
	}
	return u, nil
}

func parseRoleMapping(s string) (map[string]string, error) {
	m := make(map[string]string)
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		group, role, ok := strings.Cut(pair, "=")
		group, role = strings.TrimSpace(group), strings.TrimSpace(role)
		if !ok || group == "" {
			return nil, fmt.Errorf("%q is not group=role", pair)
		}
		if !isRole(role) {
			return nil, fmt.Errorf("%q names unknown role %q (known: %s)", pair, role, strings.Join(identity.Roles, ", "))
		}
		m[group] = role
	}
	if len(m) == 0 {
		return nil, errors.New("maps no group to a role")
	}
	return m, nil
}

// parseScopes reads a space-separated scope list (RFC 6749 scope tokens:
// printable ASCII without space, quote or backslash). openid is required:
// without it the provider issues no ID token.
func parseScopes(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, sc := range strings.Fields(s) {
		for _, r := range sc {
			if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
				return nil, fmt.Errorf("%q is not a valid scope", sc)
			}
		}
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	if !seen["openid"] {
		return nil, errors.New("must include openid (space separated, such as \"" + DefaultOIDCScopes + "\")")
	}
	return out, nil
}

func isRole(r string) bool {
	for _, k := range identity.Roles {
		if r == k {
			return true
		}
	}
	return false
}

// prepareDataDir creates dir with mode 0700 if needed, refuses it when
// others can write to it or its key files (CheckDataDir), and proves it is
// writable by creating and removing a file in it.
func prepareDataDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("cannot create %s: %v", abs, unwrapPath(err))
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	if err := checkDataDirModes(abs); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(abs, ".write-check-*")
	if err != nil {
		return "", fmt.Errorf("%s is not writable: %v", abs, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return abs, nil
}

// DataDirFiles are the files in the data directory whose replacement
// would hand someone else the installation: its keys and its SQLite
// database with the database's journal files.
var DataDirFiles = []string{"sealing.key", "session.keys", "redaction.key", "audit-signing.key",
	"warden.db", "warden.db-wal", "warden.db-shm"}

// CheckDataDir refuses a data directory that group or others can write
// to, or one of DataDirFiles in it that they can write to: anyone who can
// could delete or replace a key or the database. Warden itself creates
// the directory 0700 and its files 0600; a directory made beforehand
// keeps the mode it was given, so it is checked rather than changed. The
// error names WARDEN_DATA_DIR, the mode and the chmod that fixes it.
func CheckDataDir(dir string) error {
	if err := checkDataDirModes(dir); err != nil {
		return fmt.Errorf("WARDEN_DATA_DIR %w", err)
	}
	return nil
}

func checkDataDirModes(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // no group and other bits to check
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if err := notWritableByOthers(dir, st.Mode(), "700"); err != nil {
		return err
	}
	for _, name := range DataDirFiles {
		path := filepath.Join(dir, name)
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %v", path, unwrapPath(err))
		}
		if err := notWritableByOthers(path, st.Mode(), "600"); err != nil {
			return err
		}
	}
	return nil
}

func notWritableByOthers(path string, mode fs.FileMode, fix string) error {
	if mode&0o022 == 0 {
		return nil
	}
	who := "others"
	switch {
	case mode&0o022 == 0o022:
		who = "group and others"
	case mode&0o020 != 0:
		who = "its group"
	}
	return fmt.Errorf("%s is mode %04o: %s can write to it; run chmod %s %s", path, mode.Perm(), who, fix, path)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseDatabase reads the database settings into c.
func parseDatabase(c *Config, get func(string) string, bad func(name, format string, a ...any)) {
	var err error
	c.DatabaseURL = get("WARDEN_DATABASE_URL")
	if u := c.DatabaseURL; u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		bad("WARDEN_DATABASE_URL", "is not a postgres:// URL; leave it unset for SQLite in the data directory")
	}
	c.DBStatementTimeout, err = time.ParseDuration(get("WARDEN_DB_STATEMENT_TIMEOUT"))
	if err != nil || c.DBStatementTimeout < 0 {
		bad("WARDEN_DB_STATEMENT_TIMEOUT", "%q is not a duration such as 30s (0 for none)", get("WARDEN_DB_STATEMENT_TIMEOUT"))
	}
	c.DBConnectTimeout, err = time.ParseDuration(get("WARDEN_DB_CONNECT_TIMEOUT"))
	if err != nil || c.DBConnectTimeout < time.Second {
		bad("WARDEN_DB_CONNECT_TIMEOUT", "%q is not a duration of 1s or more, such as 10s", get("WARDEN_DB_CONNECT_TIMEOUT"))
	}
	c.DBMaxConns, err = strconv.Atoi(get("WARDEN_DB_MAX_CONNS"))
	if err != nil || c.DBMaxConns < 1 || c.DBMaxConns > 1000 {
		bad("WARDEN_DB_MAX_CONNS", "%q is not a whole number from %d to %d", get("WARDEN_DB_MAX_CONNS"), 1, 1000)
	}
}

// LoadCommand reads only the database settings (WARDEN_DATABASE_URL and
// WARDEN_DB_*) and the installation keys (sealing, redaction, audit
// signing) from env, for the operator commands that open the store
// without serving: the returned Config has those fields set and no
// others, and nothing on disk is touched.
func LoadCommand(env func(string) (string, bool)) (Config, error) {
	var errs []error
	get := func(name string) string {
		for _, s := range settings {
			if s.env == name {
				if v, ok := env(name); ok {
					return strings.TrimSpace(v)
				}
				return s.def
			}
		}
		return ""
	}
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...)))
	}
	var c Config
	parseDatabase(&c, get, bad)
	parseKeys(&c, get, bad)
	return c, errors.Join(errs...)
}

// parseKeys reads the installation keys into c.
func parseKeys(c *Config, get func(string) string, bad func(name, format string, a ...any)) {
	c.SealingKey = hexKey(get, bad, "WARDEN_SEALING_KEY", 32)
	c.RedactionKey = hexKey(get, bad, "WARDEN_REDACTION_KEY", 32)
	c.AuditSigningKey = hexKey(get, bad, "WARDEN_AUDIT_SIGNING_KEY", 32)
}

// hexKey reads a key written as hex in setting name, or in the file that
// name+"_FILE" names (a mounted secret; surrounding white space is
// ignored). It is nil when neither is set.
func hexKey(get func(string) string, bad func(name, format string, a ...any), name string, sizes ...int) []byte {
	v := get(name)
	if file := get(name + "_FILE"); file != "" {
		if v != "" {
			bad(name, "set %s or %s_FILE, not both", name, name)
			return nil
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			bad(name+"_FILE", "%v", err)
			return nil
		}
		if v = strings.TrimSpace(string(raw)); v == "" {
			bad(name+"_FILE", "%s is empty", file)
			return nil
		}
		name += "_FILE"
	}
	if v == "" {
		return nil
	}
	k, err := hex.DecodeString(v)
	if err != nil || !slices.Contains(sizes, len(k)) {
		want := make([]string, len(sizes))
		for i, n := range sizes {
			want[i] = strconv.Itoa(n)
		}
		bad(name, "must be %s bytes written as hex", strings.Join(want, " or "))
		return []byte{} // set, though bad: no second complaint that it is missing
	}
	return k
}

// badOrigin says why o is not an origin as a browser sends it in Origin
// (scheme://host[:port], lower case, nothing after), or "".
func badOrigin(o string) string {
	u, err := url.Parse(o)
	switch {
	case o == "*":
		return "is a wildcard: list the origins allowed"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "is not an origin such as https://app.example.com"
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "/"):
		return "is not an origin: only scheme://host[:port], without a path"
	case o != strings.ToLower(o):
		return "must be lower case, as browsers send it"
	}
	return ""
}

// parseOTLP reads the trace export settings into c. The headers are
// credentials: an error names the bad pair's key, never its value.
func parseOTLP(c *Config, get func(string) string, bad func(name, format string, a ...any)) {
	if e := get("WARDEN_OTLP_ENDPOINT"); e != "" {
		if _, err := parseHTTPURL(e); err != nil {
			bad("WARDEN_OTLP_ENDPOINT", "%v", err)
		}
		c.OTLPEndpoint = e
	}
	h, err := parseHeaders(get("WARDEN_OTLP_HEADERS"))
	switch {
	case err != nil:
		bad("WARDEN_OTLP_HEADERS", "%v", err)
	case len(h) > 0 && c.OTLPEndpoint == "":
		bad("WARDEN_OTLP_HEADERS", "set only with WARDEN_OTLP_ENDPOINT")
	}
	c.OTLPHeaders = h
}

// parseHeaders reads key=value pairs, comma separated, with values
// percent-encoded, as OTEL_EXPORTER_OTLP_HEADERS is written. A "+" stays
// a "+" (base64 in Basic credentials).
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderName(k) {
			return nil, fmt.Errorf("pair %d is not name=value with a header name", i+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(dec, "\r\n\x00") {
			return nil, fmt.Errorf("the value of %s is not percent-encoded text", k)
		}
		out[k] = dec
	}
	return out, nil
}

// validHeaderName reports whether k is an HTTP header name (RFC 9110
// token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r > 0x7e || r <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}
