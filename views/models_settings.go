package views

// TenantModelForm is the tenant page's model settings form, as typed.
type TenantModelForm struct {
	Content  string // "redacted" or "none"
	Outbound bool
	Errors   FieldErrors
}

// KeyModelLimitsForm is the key page's model limits form, as typed.
type KeyModelLimitsForm struct {
	RPM, TPM string
	Errors   FieldErrors
	Notice   string
}

// AliasForm is the /models page's alias options form, as typed.
type AliasForm struct {
	Alias, CacheTTL string
	Cascade         bool
}

var modelContentChoices = []struct{ Value, Label string }{
	{"redacted", "Redacted: prompt and completion, with PII replaced by keyed tokens"},
	{"none", "None: metadata only (tokens, cost, latency, status)"},
}
