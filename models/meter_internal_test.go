package models

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestResetIn(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    bucket
		want string
	}{
		{"full", bucket{capacity: 60, level: 60}, "0s"},
		{"no limit", bucket{}, "0s"},
		{"one of 60 a minute taken", bucket{capacity: 60, level: 59}, "1s"},
		{"empty bucket of 10 a minute", bucket{capacity: 10, level: 0}, "1m0s"},
		{"below empty", bucket{capacity: 10, level: -50}, "6m0s"},
		{"a sliver", bucket{capacity: 6000, level: 5999}, "10ms"},
	} {
		if got := resetIn(tt.b); got != tt.want {
			t.Errorf("%s: resetIn(%+v) = %q, want %q", tt.name, tt.b, got, tt.want)
		}
	}
}

func TestRateLimitHeaders(t *testing.T) {
	g := &Gateway{limits: newLimiter()}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		lim    KeyLimits
		admit  int // calls admitted (estimate 100 tokens each) before the headers
		want   map[string]string
		absent []string
	}{
		{"no limits", KeyLimits{}, 1, map[string]string{}, []string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Limit-Tokens"}},
		{"requests only, none used yet", KeyLimits{RPM: 30}, 0, map[string]string{"X-Ratelimit-Limit-Requests": "30", "X-Ratelimit-Remaining-Requests": "30", "X-Ratelimit-Reset-Requests": "0s"},
			[]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}},
		{"both, two calls", KeyLimits{RPM: 30, TPM: 6000}, 2, map[string]string{
			"X-Ratelimit-Limit-Requests": "30", "X-Ratelimit-Remaining-Requests": "28", "X-Ratelimit-Reset-Requests": "4s",
			"X-Ratelimit-Limit-Tokens": "6000", "X-Ratelimit-Remaining-Tokens": "5800", "X-Ratelimit-Reset-Tokens": "2s"}, nil},
	} {
		key := "key-" + tt.name
		for range tt.admit {
			if _, err := g.limits.admit(key, tt.lim, 100, now); err != nil {
				t.Fatal(err)
			}
		}
		h := http.Header{}
		g.rateLimitHeaders(h, key, tt.lim, now)
		for k, v := range tt.want {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", tt.name, k, h.Get(k), v)
			}
		}
		for _, k := range tt.absent {
			if h.Get(k) != "" {
				t.Errorf("%s: %s = %q, want none", tt.name, k, h.Get(k))
			}
		}
	}
}

func TestCallTags(t *testing.T) {
	long := strings.Repeat("k", MaxTagKeyLen+1)
	for _, tt := range []struct {
		name, header, body string
		want               map[string]string // nil: none
		err                string            // "": accepted
	}{
		{"none", "", "", nil, ""},
		{"body null", "", "null", nil, ""},
		{"header", `{"a":"1"}`, "", map[string]string{"a": "1"}, ""},
		{"both, header wins", `{"a":"h"}`, `{"a":"b","c":"d"}`, map[string]string{"a": "h", "c": "d"}, ""},
		{"empty value", `{"a":""}`, "", map[string]string{"a": ""}, ""},
		{"bounds exactly", `{"` + strings.Repeat("k", MaxTagKeyLen) + `":"` + strings.Repeat("v", MaxTagValueLen) + `"}`, "",
			map[string]string{strings.Repeat("k", MaxTagKeyLen): strings.Repeat("v", MaxTagValueLen)}, ""},
		{"header not an object", `"a"`, "", nil, "X-Warden-Metadata must be a JSON object of strings"},
		{"body not an object", "", `[1]`, nil, `"metadata" must be a JSON object of strings`},
		{"nested value", `{"a":{"b":"c"}}`, "", nil, `the value of "a" is not a string`},
		{"key too long", `{"` + long + `":"v"}`, "", nil, "a key has at most 64"},
		{"value too long", `{"a":"` + strings.Repeat("v", MaxTagValueLen+1) + `"}`, "", nil, "a value has at most 512"},
	} {
		ctx := WithTagsHeader(context.Background(), tt.header)
		got, err := callTags(ctx, []byte(tt.body))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: callTags = %v", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: callTags error = %v, want one saying %q", tt.name, err, tt.err)
		case tt.err == "" && (len(got) != len(tt.want) || (tt.want == nil) != (got == nil)):
			t.Errorf("%s: callTags = %q, want %q", tt.name, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: tag %q = %q, want %q", tt.name, k, got[k], v)
			}
		}
	}
}

func TestParseTag(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Tag
		ok   bool
	}{
		{"", Tag{}, true},
		{"team=support", Tag{"team", "support"}, true},
		{" team = support ", Tag{"team", "support"}, true},
		{"url=https://x?a=b", Tag{"url", "https://x?a=b"}, true},
		{"team=", Tag{"team", ""}, true},
		{"team", Tag{}, false},
		{"=support", Tag{}, false},
		{strings.Repeat("k", 65) + "=v", Tag{}, false},
	} {
		got, err := ParseTag(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTag(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	if n := (Tag{"team", `a"b`}).needle(); n != `"team":"a\"b"` {
		t.Errorf("needle = %s", n)
	}
}
