package models

import (
	"testing"
	"time"
)

func valid() Deployment {
	return Deployment{Name: "gpt-east", Alias: "chat", Provider: ProviderOpenAI, BaseURL: "https://api.example.com/v1", UpstreamModel: "gpt-4o-mini",
		InputMicrosPerM: 150_000, OutputMicrosPerM: 600_000, ContextWindow: 128000, MaxOutputTokens: 4096, Timeout: 30 * time.Second, Concurrency: 16, Weight: 1}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Deployment)
		field  string // "" for valid
	}{
		{"valid", func(*Deployment) {}, ""},
		{"upper-case name", func(d *Deployment) { d.Name = "GPT" }, "name"},
		{"empty alias", func(d *Deployment) { d.Alias = "" }, "alias"},
		{"other provider", func(d *Deployment) { d.Provider = "anthropic" }, "provider"},
		{"ftp base URL", func(d *Deployment) { d.BaseURL = "ftp://x/v1" }, "base_url"},
		{"no upstream model", func(d *Deployment) { d.UpstreamModel = " " }, "upstream_model"},
		{"negative price", func(d *Deployment) { d.OutputMicrosPerM = -1 }, "prices"},
		{"no context", func(d *Deployment) { d.ContextWindow = 0 }, "context_window"},
		{"cap beyond context", func(d *Deployment) { d.MaxOutputTokens = 200000 }, "max_output_tokens"},
		{"timeout too short", func(d *Deployment) { d.Timeout = time.Millisecond }, "timeout"},
		{"no concurrency", func(d *Deployment) { d.Concurrency = 0 }, "concurrency"},
		{"negative priority", func(d *Deployment) { d.Priority = -1 }, "priority"},
		{"no weight", func(d *Deployment) { d.Weight = 0 }, "weight"},
		{"weight too high", func(d *Deployment) { d.Weight = 1001 }, "weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			tt.change(&d)
			errs := d.Validate()
			if tt.field == "" && len(errs) != 0 || tt.field != "" && (len(errs) != 1 || errs[tt.field] == "") {
				t.Fatalf("Validate() = %v, want an error for %q only", errs, tt.field)
			}
		})
	}
}

func TestCostRoundsUpAndEstimateCoversText(t *testing.T) {
	d := valid()
	tests := []struct {
		in, out, want int64
	}{
		{0, 0, 0},
		{1, 0, 1}, // 0.15 micro-units rounds up to 1
		{1_000_000, 0, 150_000},
		{1_000_000, 1_000_000, 750_000},
		{10, 10, 2 + 6},
	}
	for _, tt := range tests {
		if got := cost(d, tt.in, tt.out); got != tt.want {
			t.Errorf("cost(%d, %d) = %d, want %d", tt.in, tt.out, got, tt.want)
		}
	}
	// A token a byte is above any tokenizer's count: every token covers a
	// byte at least.
	if got := promptBound(len(`[{"role":"user","content":"1,1,1,1,1,1"}]`)); got < 11 {
		t.Errorf("promptBound = %d, want at least 11 (one token a byte of the text)", got)
	}
	// Absurd counts and prices cannot overflow the budget's arithmetic.
	if got := cost(Deployment{InputMicrosPerM: 1 << 62, OutputMicrosPerM: 1 << 62}, maxUsage, maxUsage); got != maxCost {
		t.Errorf("cost of absurd counts = %d, want the cap %d", got, maxCost)
	}
}
