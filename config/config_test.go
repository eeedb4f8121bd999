package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestLoadDefaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	c, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": dir}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Addr != "127.0.0.1:8080" {
		t.Errorf("Addr = %q, want 127.0.0.1:8080", c.Addr)
	}
	if !c.DevMode() {
		t.Error("DevMode() = false with no issuer, want true")
	}
	if got := c.PublicURL.String(); got != "http://127.0.0.1:8080" {
		t.Errorf("PublicURL = %q, want http://127.0.0.1:8080", got)
	}
	if c.OIDCRedirectURL != "http://127.0.0.1:8080/auth/callback" {
		t.Errorf("OIDCRedirectURL = %q", c.OIDCRedirectURL)
	}
	if c.OIDCGroupsClaim != "groups" || c.TenantPrefix != "warden-tenant-" || c.RoleMapping["warden-admin"] != "admin" {
		t.Errorf("OIDC defaults = %q %q %v", c.OIDCGroupsClaim, c.TenantPrefix, c.RoleMapping)
	}
	if c.PriceInputTokenMicros != 2 || c.PriceOutputTokenMicros != 8 {
		t.Errorf("prices = %d, %d; want 2 and 8", c.PriceInputTokenMicros, c.PriceOutputTokenMicros)
	}
	if c.ShutdownGrace != 15*time.Second || c.DrainDelay != time.Second {
		t.Errorf("ShutdownGrace, DrainDelay = %v, %v", c.ShutdownGrace, c.DrainDelay)
	}
	if c.AuditCheckpointInterval != time.Hour {
		t.Errorf("AuditCheckpointInterval = %v, want 1h", c.AuditCheckpointInterval)
	}
	if c.Secure() {
		t.Error("Secure() = true for http")
	}
	if strings.Join(c.OIDCScopes, " ") != "openid profile email groups" || c.OIDCTokenAuth != "" {
		t.Errorf("OIDCScopes, OIDCTokenAuth = %q, %q; want the default scopes and discovery's method", c.OIDCScopes, c.OIDCTokenAuth)
	}
	if c.SessionIdle != 30*time.Minute || c.SessionMax != 12*time.Hour {
		t.Errorf("SessionIdle, SessionMax = %v, %v; want 30m and 12h", c.SessionIdle, c.SessionMax)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %o, want 700", st.Mode().Perm())
	}
	if c.DataDir != dir {
		t.Errorf("DataDir = %q, want %q", c.DataDir, dir)
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	dir := t.TempDir()
	c, err := Load([]string{"--addr", "127.0.0.1:9999", "--oidc-groups-claim", "roles", "--audit-checkpoint-interval", "15m"},
		envOf(map[string]string{"WARDEN_DATA_DIR": dir, "WARDEN_ADDR": "127.0.0.1:7777", "WARDEN_AUDIT_CHECKPOINT_INTERVAL": "2h"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.OIDCGroupsClaim != "roles" || c.AuditCheckpointInterval != 15*time.Minute {
		t.Errorf("Addr, claim, checkpoint interval = %q, %q, %v; want flag values", c.Addr, c.OIDCGroupsClaim, c.AuditCheckpointInterval)
	}
}

func TestAuditCheckpointIntervalFromEnvironment(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
	}{{"1s", time.Second}, {"90m", 90 * time.Minute}, {" 24h ", 24 * time.Hour}} {
		c, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_AUDIT_CHECKPOINT_INTERVAL": tt.value}))
		if err != nil || c.AuditCheckpointInterval != tt.want {
			t.Errorf("WARDEN_AUDIT_CHECKPOINT_INTERVAL=%q: AuditCheckpointInterval = %v, %v; want %v", tt.value, c.AuditCheckpointInterval, err, tt.want)
		}
	}
}

func TestAlertInterval(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  string
		want time.Duration
	}{{nil, "", time.Minute}, {nil, "30s", 30 * time.Second}, {[]string{"--alert-interval", "5m"}, "30s", 5 * time.Minute}} {
		env := map[string]string{"WARDEN_DATA_DIR": t.TempDir()}
		if tt.env != "" {
			env["WARDEN_ALERT_INTERVAL"] = tt.env
		}
		c, err := Load(tt.args, envOf(env))
		if err != nil || c.AlertInterval != tt.want {
			t.Errorf("Load(%v, WARDEN_ALERT_INTERVAL=%q): AlertInterval = %v, %v; want %v", tt.args, tt.env, c.AlertInterval, err, tt.want)
		}
	}
}

func TestCORSOrigins(t *testing.T) {
	for _, tt := range []struct {
		env  string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"https://app.example.com", []string{"https://app.example.com"}},
		{"https://app.example.com, http://127.0.0.1:5173,https://app.example.com", []string{"https://app.example.com", "http://127.0.0.1:5173"}},
	} {
		c, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_CORS_ORIGINS": tt.env}))
		if err != nil || !slices.Equal(c.CORSOrigins, tt.want) {
			t.Errorf("WARDEN_CORS_ORIGINS=%q: CORSOrigins = %q, %v; want %q", tt.env, c.CORSOrigins, err, tt.want)
		}
	}
}

func TestUsageListsEverySetting(t *testing.T) {
	u := Usage()
	for _, s := range settings {
		if !strings.Contains(u, "--"+s.flag+" ") || !strings.Contains(u, s.env+" ") {
			t.Errorf("Usage() does not list --%s and %s:\n%s", s.flag, s.env, u)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if !strings.Contains(string(readme), "| `"+s.env+"` | `--"+s.flag+"` |") {
			t.Errorf("README.md's configuration table has no row for %s (--%s)", s.env, s.flag)
		}
	}
}

func TestProductionSettings(t *testing.T) {
	c, err := Load(nil, envOf(map[string]string{
		"WARDEN_DATA_DIR":           t.TempDir(),
		"WARDEN_ADDR":               "0.0.0.0:443",
		"WARDEN_PUBLIC_URL":         "https://warden.example.com",
		"WARDEN_OIDC_ISSUER":        "https://login.example.com/realms/ops",
		"WARDEN_OIDC_CLIENT_ID":     "warden",
		"WARDEN_OIDC_CLIENT_SECRET": "s3cret",
		"WARDEN_SESSION_HASH_KEY":   strings.Repeat("ab", 32),
		"WARDEN_SESSION_BLOCK_KEY":  strings.Repeat("cd", 32),
	}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.DevMode() || !c.Secure() {
		t.Errorf("DevMode, Secure = %v, %v; want false, true", c.DevMode(), c.Secure())
	}
	if c.OIDCRedirectURL != "https://warden.example.com/auth/callback" {
		t.Errorf("OIDCRedirectURL = %q", c.OIDCRedirectURL)
	}
	if len(c.SessionHashKey) != 32 || len(c.SessionBlockKey) != 32 {
		t.Errorf("session keys = %d, %d bytes", len(c.SessionHashKey), len(c.SessionBlockKey))
	}
}

func TestLoadRefusesBadSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	prod := map[string]string{"WARDEN_OIDC_ISSUER": "https://idp.example.com", "WARDEN_OIDC_CLIENT_ID": "w"}
	tests := []struct {
		name    string
		env     map[string]string
		setting string // must be named in the error
		text    string // and this must appear
	}{
		{"address not host:port", map[string]string{"WARDEN_ADDR": "8080"}, "WARDEN_ADDR", "host:port"},
		{"database URL not postgres", map[string]string{"WARDEN_DATABASE_URL": "mysql://db/warden"}, "WARDEN_DATABASE_URL", "postgres://"},
		{"database pool of none", map[string]string{"WARDEN_DB_MAX_CONNS": "0"}, "WARDEN_DB_MAX_CONNS", "1 to 1000"},
		{"statement timeout negative", map[string]string{"WARDEN_DB_STATEMENT_TIMEOUT": "-1s"}, "WARDEN_DB_STATEMENT_TIMEOUT", "duration"},
		{"connect timeout too short", map[string]string{"WARDEN_DB_CONNECT_TIMEOUT": "10ms"}, "WARDEN_DB_CONNECT_TIMEOUT", "1s or more"},
		{"address bad port", map[string]string{"WARDEN_ADDR": "127.0.0.1:99999"}, "WARDEN_ADDR", "port"},
		{"dev mode on all interfaces", map[string]string{"WARDEN_ADDR": "0.0.0.0:8080"}, "WARDEN_ADDR", "loopback"},
		{"dev mode on a LAN address", map[string]string{"WARDEN_ADDR": "192.0.2.10:8080"}, "WARDEN_ADDR", "loopback"},
		{"dev mode public URL elsewhere", map[string]string{"WARDEN_PUBLIC_URL": "https://warden.example.com"}, "WARDEN_PUBLIC_URL", "loopback"},
		{"public URL not a URL", map[string]string{"WARDEN_PUBLIC_URL": "warden.local"}, "WARDEN_PUBLIC_URL", "absolute"},
		{"public URL with path", map[string]string{"WARDEN_PUBLIC_URL": "http://127.0.0.1:8080/warden"}, "WARDEN_PUBLIC_URL", "path"},
		{"issuer not a URL", map[string]string{"WARDEN_OIDC_ISSUER": "idp.example.com", "WARDEN_OIDC_CLIENT_ID": "w"}, "WARDEN_OIDC_ISSUER", "absolute"},
		{"issuer without client id", map[string]string{"WARDEN_OIDC_ISSUER": "https://idp.example.com"}, "WARDEN_OIDC_CLIENT_ID", "required"},
		{"bad redirect URL", map[string]string{"WARDEN_OIDC_REDIRECT_URL": "/auth/callback"}, "WARDEN_OIDC_REDIRECT_URL", "absolute"},
		{"empty groups claim", map[string]string{"WARDEN_OIDC_GROUPS_CLAIM": " "}, "WARDEN_OIDC_GROUPS_CLAIM", "empty"},
		{"role mapping unknown role", map[string]string{"WARDEN_OIDC_ROLE_MAPPING": "ops=root"}, "WARDEN_OIDC_ROLE_MAPPING", "unknown role"},
		{"role mapping malformed", map[string]string{"WARDEN_OIDC_ROLE_MAPPING": "ops"}, "WARDEN_OIDC_ROLE_MAPPING", "group=role"},
		{"hash key not hex", map[string]string{"WARDEN_SESSION_HASH_KEY": "zz", "WARDEN_SESSION_BLOCK_KEY": strings.Repeat("ab", 32)}, "WARDEN_SESSION_HASH_KEY", "hex"},
		{"block key wrong size", map[string]string{"WARDEN_SESSION_HASH_KEY": strings.Repeat("ab", 32), "WARDEN_SESSION_BLOCK_KEY": "abcd"}, "WARDEN_SESSION_BLOCK_KEY", "32 bytes"},
		{"only one session key", map[string]string{"WARDEN_SESSION_HASH_KEY": strings.Repeat("ab", 32)}, "WARDEN_SESSION_HASH_KEY", "both"},
		{"scopes without openid", map[string]string{"WARDEN_OIDC_SCOPES": "profile email"}, "WARDEN_OIDC_SCOPES", "openid"},
		{"scope with a quote", map[string]string{"WARDEN_OIDC_SCOPES": `openid "groups"`}, "WARDEN_OIDC_SCOPES", "not a valid scope"},
		{"token auth unknown", map[string]string{"WARDEN_OIDC_TOKEN_AUTH": "jwt"}, "WARDEN_OIDC_TOKEN_AUTH", "basic, post or auto"},
		{"session idle not a duration", map[string]string{"WARDEN_SESSION_IDLE": "half an hour"}, "WARDEN_SESSION_IDLE", "duration"},
		{"session idle too short", map[string]string{"WARDEN_SESSION_IDLE": "10s"}, "WARDEN_SESSION_IDLE", "at least 1m"},
		{"session idle longer than max", map[string]string{"WARDEN_SESSION_IDLE": "13h"}, "WARDEN_SESSION_IDLE", "WARDEN_SESSION_MAX"},
		{"session max too long", map[string]string{"WARDEN_SESSION_MAX": "1000h"}, "WARDEN_SESSION_MAX", "to 720h"},
		{"grace not a duration", map[string]string{"WARDEN_SHUTDOWN_GRACE": "soon"}, "WARDEN_SHUTDOWN_GRACE", "duration"},
		{"negative drain delay", map[string]string{"WARDEN_DRAIN_DELAY": "-1s"}, "WARDEN_DRAIN_DELAY", "duration"},
		{"checkpoint interval not a duration", map[string]string{"WARDEN_AUDIT_CHECKPOINT_INTERVAL": "hourly"}, "WARDEN_AUDIT_CHECKPOINT_INTERVAL", "duration"},
		{"checkpoint interval zero", map[string]string{"WARDEN_AUDIT_CHECKPOINT_INTERVAL": "0s"}, "WARDEN_AUDIT_CHECKPOINT_INTERVAL", "from 1s to 24h0m0s"},
		{"checkpoint interval too short", map[string]string{"WARDEN_AUDIT_CHECKPOINT_INTERVAL": "500ms"}, "WARDEN_AUDIT_CHECKPOINT_INTERVAL", "from 1s"},
		{"checkpoint interval too long", map[string]string{"WARDEN_AUDIT_CHECKPOINT_INTERVAL": "25h"}, "WARDEN_AUDIT_CHECKPOINT_INTERVAL", "to 24h0m0s"},
		{"alert interval not a duration", map[string]string{"WARDEN_ALERT_INTERVAL": "often"}, "WARDEN_ALERT_INTERVAL", "duration"},
		{"alert interval too short", map[string]string{"WARDEN_ALERT_INTERVAL": "500ms"}, "WARDEN_ALERT_INTERVAL", "from 1s"},
		{"alert interval too long", map[string]string{"WARDEN_ALERT_INTERVAL": "2h"}, "WARDEN_ALERT_INTERVAL", "to 1h0m0s"},
		{"price not a number", map[string]string{"WARDEN_PRICE_INPUT_TOKEN": "0.5"}, "WARDEN_PRICE_INPUT_TOKEN", "whole number"},
		{"negative price", map[string]string{"WARDEN_PRICE_OUTPUT_TOKEN": "-1"}, "WARDEN_PRICE_OUTPUT_TOKEN", "whole number"},
		{"OTLP endpoint not a URL", map[string]string{"WARDEN_OTLP_ENDPOINT": "localhost:4318"}, "WARDEN_OTLP_ENDPOINT", "absolute"},
		{"OTLP headers without endpoint", map[string]string{"WARDEN_OTLP_HEADERS": "Authorization=Basic%20abc"}, "WARDEN_OTLP_HEADERS", "WARDEN_OTLP_ENDPOINT"},
		{"OTLP header not a pair", map[string]string{"WARDEN_OTLP_ENDPOINT": "http://127.0.0.1:4318", "WARDEN_OTLP_HEADERS": "a=b,secretvalue"}, "WARDEN_OTLP_HEADERS", "pair 2"},
		{"OTLP header value not encoded", map[string]string{"WARDEN_OTLP_ENDPOINT": "http://127.0.0.1:4318", "WARDEN_OTLP_HEADERS": "Authorization=Basic%zz"}, "WARDEN_OTLP_HEADERS", "value of Authorization"},
		{"OTLP header with a line break", map[string]string{"WARDEN_OTLP_ENDPOINT": "http://127.0.0.1:4318", "WARDEN_OTLP_HEADERS": "X-A=b%0D%0AX-B:c"}, "WARDEN_OTLP_HEADERS", "value of X-A"},
		{"runbook dir missing", map[string]string{"WARDEN_RUNBOOK_DIR": "/nonexistent/runbooks"}, "WARDEN_RUNBOOK_DIR", "not a directory"},
		{"CORS wildcard", map[string]string{"WARDEN_CORS_ORIGINS": "*"}, "WARDEN_CORS_ORIGINS", "list the origins"},
		{"CORS origin with a path", map[string]string{"WARDEN_CORS_ORIGINS": "https://app.example.com/agent"}, "WARDEN_CORS_ORIGINS", "without a path"},
		{"CORS origin with a slash", map[string]string{"WARDEN_CORS_ORIGINS": "https://app.example.com/"}, "WARDEN_CORS_ORIGINS", "without a path"},
		{"CORS origin not http", map[string]string{"WARDEN_CORS_ORIGINS": "https://ok.example.com, ftp://files.example.com"}, "WARDEN_CORS_ORIGINS", `"ftp://files.example.com" is not an origin`},
		{"CORS origin bare host", map[string]string{"WARDEN_CORS_ORIGINS": "app.example.com"}, "WARDEN_CORS_ORIGINS", "not an origin"},
		{"CORS origin upper case", map[string]string{"WARDEN_CORS_ORIGINS": "https://App.example.com"}, "WARDEN_CORS_ORIGINS", "lower case"},
		{"data dir under a file", map[string]string{"WARDEN_DATA_DIR": filepath.Join(file, "data")}, "WARDEN_DATA_DIR", "cannot create"},
		{"data dir is a file", map[string]string{"WARDEN_DATA_DIR": file}, "WARDEN_DATA_DIR", "not a directory"},
		{"production on any interface is fine but issuer broken", merge(prod, map[string]string{"WARDEN_ADDR": "0.0.0.0:8080", "WARDEN_OIDC_ISSUER": "ftp://idp"}), "WARDEN_OIDC_ISSUER", "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"WARDEN_DATA_DIR": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			_, err := Load(nil, envOf(env))
			if err == nil {
				t.Fatalf("Load(%v) succeeded, want an error naming %s", tt.env, tt.setting)
			}
			var line string
			for _, l := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(l, tt.setting+":") {
					line = l
				}
			}
			if line == "" || !strings.Contains(line, tt.text) {
				t.Fatalf("Load(%v) error =\n%v\nwant a line starting %q containing %q", tt.env, err, tt.setting+":", tt.text)
			}
		})
	}
}

func TestOTLPSettings(t *testing.T) {
	c, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if c.OTLPEndpoint != "" || len(c.OTLPHeaders) != 0 {
		t.Errorf("defaults: endpoint %q headers %v, want none", c.OTLPEndpoint, c.OTLPHeaders)
	}
	c, err = Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(),
		"WARDEN_OTLP_ENDPOINT": "https://cloud.langfuse.com/api/public/otel",
		"WARDEN_OTLP_HEADERS":  " Authorization=Basic%20cGs6c2s+/= , x-langfuse-ingestion-version=4,",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.OTLPEndpoint != "https://cloud.langfuse.com/api/public/otel" {
		t.Errorf("OTLPEndpoint = %q", c.OTLPEndpoint)
	}
	// Percent-decoded, and a "+" of base64 kept.
	want := map[string]string{"Authorization": "Basic cGs6c2s+/=", "x-langfuse-ingestion-version": "4"}
	if len(c.OTLPHeaders) != len(want) || c.OTLPHeaders["Authorization"] != want["Authorization"] || c.OTLPHeaders["x-langfuse-ingestion-version"] != "4" {
		t.Errorf("OTLPHeaders = %v, want %v", c.OTLPHeaders, want)
	}
	// The value of a bad header, a credential, is not in the error.
	_, err = Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(),
		"WARDEN_OTLP_ENDPOINT": "http://127.0.0.1:4318", "WARDEN_OTLP_HEADERS": "Authorization=s3cr3t%zz"}))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error = %v, want one without the header's value", err)
	}
}

func TestLoadReportsEveryBadSettingOnItsOwnLine(t *testing.T) {
	_, err := Load(nil, envOf(map[string]string{
		"WARDEN_DATA_DIR":       t.TempDir(),
		"WARDEN_ADDR":           "nope",
		"WARDEN_SHUTDOWN_GRACE": "x",
		"WARDEN_OIDC_ISSUER":    "https://idp.example.com",
	}))
	if err == nil {
		t.Fatal("Load succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3 (addr, grace, client id):\n%v", len(lines), err)
	}
}

func TestWithListenAddr(t *testing.T) {
	c, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_ADDR": "127.0.0.1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithListenAddr("127.0.0.1:43210")
	if c.PublicURL.String() != "http://127.0.0.1:43210" || c.OIDCRedirectURL != "http://127.0.0.1:43210/auth/callback" {
		t.Errorf("after WithListenAddr: %s, %s", c.PublicURL, c.OIDCRedirectURL)
	}
	explicit, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_PUBLIC_URL": "http://localhost:8080"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := explicit.WithListenAddr("127.0.0.1:1").PublicURL.String(); got != "http://localhost:8080" {
		t.Errorf("explicit public URL changed to %s", got)
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// The installation keys come from a setting or from the file its _FILE
// setting names, never both, and must be 32 bytes of hex.
func TestInstallationKeySettings(t *testing.T) {
	key := strings.Repeat("ab", 32)
	file := filepath.Join(t.TempDir(), "signing")
	os.WriteFile(file, []byte("  "+strings.Repeat("cd", 32)+"\n"), 0o600)
	c, err := LoadCommand(envOf(map[string]string{"WARDEN_SEALING_KEY": key, "WARDEN_AUDIT_SIGNING_KEY_FILE": file}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.SealingKey) != 32 || c.SealingKey[0] != 0xab || len(c.AuditSigningKey) != 32 || c.AuditSigningKey[0] != 0xcd || c.RedactionKey != nil {
		t.Errorf("keys = %x %x %x; want the sealing key, the file's signing key and no redaction key", c.SealingKey, c.AuditSigningKey, c.RedactionKey)
	}
	for name, env := range map[string]map[string]string{
		"WARDEN_REDACTION_KEY: must be 32":              {"WARDEN_REDACTION_KEY": "abcd"},
		"WARDEN_SEALING_KEY: set WARDEN_SEALING_KEY or": {"WARDEN_SEALING_KEY": key, "WARDEN_SEALING_KEY_FILE": file},
		"WARDEN_AUDIT_SIGNING_KEY_FILE: open":           {"WARDEN_AUDIT_SIGNING_KEY_FILE": file + ".missing"},
		"WARDEN_AUDIT_SIGNING_KEY: must be 32 bytes":    {"WARDEN_AUDIT_SIGNING_KEY": "zz"},
	} {
		env["WARDEN_DATA_DIR"] = t.TempDir()
		if _, err := Load(nil, envOf(env)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Load(%v) = %v; want %q", env, err, name)
		}
	}
}

// A data directory, or a key or database file in it, that group or others
// can write to is refused with the mode and the chmod that fixes it: any
// local user could replace sealing.key, session.keys or the database. A
// 0700 directory with 0600 files loads; a group-readable file is left to
// the code that reads it (the redaction key tightens itself).
func TestLoadRefusesADataDirOthersCanWrite(t *testing.T) {
	chmod := func(t *testing.T, path string, mode os.FileMode) {
		t.Helper()
		if err := os.Chmod(path, mode); err != nil { // Chmod is not subject to the umask
			t.Fatal(err)
		}
	}
	withFiles := func(t *testing.T, dirMode os.FileMode, fileModes map[string]os.FileMode) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, mode := range fileModes {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
				t.Fatal(err)
			}
			chmod(t, path, mode)
		}
		chmod(t, dir, dirMode)
		return dir
	}
	for _, tt := range []struct {
		name     string
		dirMode  os.FileMode
		files    map[string]os.FileMode
		want     string // "" loads; else the error names this path…
		sentence string // …with this sentence
	}{
		{"0777 directory", 0o777, nil, ".", "is mode 0777: group and others can write to it; run chmod 700 "},
		{"world-writable sticky directory", 0o777 | os.ModeSticky, nil, ".", "is mode 0777: group and others can write to it; run chmod 700 "},
		{"group-writable directory", 0o770, nil, ".", "is mode 0770: its group can write to it; run chmod 700 "},
		{"0666 sealing key", 0o700, map[string]os.FileMode{"sealing.key": 0o666}, "sealing.key", "is mode 0666: group and others can write to it; run chmod 600 "},
		{"0602 session keys", 0o700, map[string]os.FileMode{"session.keys": 0o602}, "session.keys", "is mode 0602: others can write to it; run chmod 600 "},
		{"0660 database", 0o700, map[string]os.FileMode{"warden.db": 0o660}, "warden.db", "is mode 0660: its group can write to it; run chmod 600 "},
		{"0662 redaction key", 0o700, map[string]os.FileMode{"redaction.key": 0o662}, "redaction.key", "is mode 0662: group and others can write to it; run chmod 600 "},
		{"0700 directory, 0600 files", 0o700, map[string]os.FileMode{"sealing.key": 0o600, "session.keys": 0o600, "redaction.key": 0o600, "warden.db": 0o600}, "", ""},
		{"0755 directory, 0644 files", 0o755, map[string]os.FileMode{"warden.db": 0o644, "audit-signing.key": 0o644}, "", ""},
		{"an unrelated 0666 file", 0o700, map[string]os.FileMode{"notes.txt": 0o666}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := withFiles(t, tt.dirMode, tt.files)
			defer chmod(t, dir, 0o700) // so the test's cleanup can remove it
			_, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": dir}))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load with %s = %v, want it to load", tt.name, err)
				}
				return
			}
			path := filepath.Join(dir, tt.want)
			wantLine := "WARDEN_DATA_DIR: " + path + " " + tt.sentence + path
			if err == nil || !strings.Contains(err.Error(), wantLine) {
				t.Fatalf("Load with %s = %v, want a line %q", tt.name, err, wantLine)
			}
		})
	}
	// Warden creates a missing directory itself, 0700, and loads it.
	dir := filepath.Join(t.TempDir(), "new")
	if _, err := Load(nil, envOf(map[string]string{"WARDEN_DATA_DIR": dir})); err != nil {
		t.Fatalf("Load with a new directory = %v", err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("created data directory: %v, %v; want mode 0700", st.Mode().Perm(), err)
	}
	if err := CheckDataDir(withFiles(t, 0o700, map[string]os.FileMode{"sealing.key": 0o666})); err == nil ||
		!strings.HasPrefix(err.Error(), "WARDEN_DATA_DIR /") || !strings.Contains(err.Error(), "sealing.key is mode 0666") {
		t.Errorf("CheckDataDir with a 0666 sealing key = %v, want WARDEN_DATA_DIR …/sealing.key is mode 0666…", err)
	}
}
