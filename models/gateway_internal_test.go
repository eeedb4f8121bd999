package models

import (
	"encoding/json"
	"testing"
	"time"
)

func TestCacheKeyCanonicalAndPerTenant(t *testing.T) {
	a, ok := cacheKey("t1", []byte(`{"model":"m","temperature":0,"user":"x","messages":[{"role":"user","content":"hi"}]}`))
	b, ok2 := cacheKey("t1", []byte(`{"messages":[{"content":"hi","role":"user"}],"temperature":0.0,"model":"m","stream":false}`))
	c, _ := cacheKey("t2", []byte(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`))
	d, _ := cacheKey("t1", []byte(`{"model":"m","temperature":0,"seed":9007199254740993,"messages":[{"role":"user","content":"hi"}]}`))
	e, _ := cacheKey("t1", []byte(`{"model":"m","temperature":0,"seed":9007199254740992,"messages":[{"role":"user","content":"hi"}]}`))
	if !ok || !ok2 || a != b || a == c || d == e {
		t.Fatalf("keys: same request %v, other tenant differs %v, big seeds differ %v", a == b, a != c, d != e)
	}
	for _, body := range []string{`{"model":"m","messages":[]}`, `{"model":"m","temperature":1,"messages":[]}`, `{"model":"m","temperature":0,"stream":true,"messages":[]}`} {
		if _, ok := cacheKey("t1", []byte(body)); ok {
			t.Errorf("%s is cacheable", body)
		}
	}
}

func TestAnswerCacheBoundsAndExpiry(t *testing.T) {
	c := newAnswerCache()
	now := time.Now()
	for i := 0; i < cacheMaxEntries+10; i++ {
		var k [32]byte
		k[0], k[1] = byte(i), byte(i>>8)
		c.put(k, []byte("answer"), "d", time.Minute, now)
	}
	if c.ll.Len() != cacheMaxEntries || len(c.m) != cacheMaxEntries {
		t.Fatalf("entries = %d, bound %d", c.ll.Len(), cacheMaxEntries)
	}
	var first [32]byte // the oldest went first
	if _, ok := c.get(first, now); ok {
		t.Fatal("the least recently used entry was kept")
	}
	var k [32]byte
	k[0], k[1] = 5, 1
	c.put(k, []byte("x"), "d", time.Minute, now)
	if _, ok := c.get(k, now.Add(50*time.Second)); !ok {
		t.Fatal("an entry expired before its TTL less the jitter")
	}
	if _, ok := c.get(k, now.Add(70*time.Second)); ok {
		t.Fatal("an entry outlived its TTL plus the jitter")
	}
	big := make([]byte, cacheMaxAnswer+1)
	c.put(k, big, "d", time.Minute, now)
	if e, ok := c.get(k, now); ok && len(e.body) == len(big) {
		t.Fatal("an answer above the bound was kept")
	}
}

func TestLimiterCorrectsTokensAtSettlement(t *testing.T) {
	l := newLimiter()
	now := time.Now()
	lim := KeyLimits{TPM: 1000}
	tk, err := l.admit("k", lim, 800, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.admit("k", lim, 800, now); err == nil {
		t.Fatal("admitted above the minute's tokens")
	}
	l.settle(tk, 100) // used 100 of the 800 estimated
	if _, err := l.admit("k", lim, 800, now); err != nil {
		t.Fatalf("after the correction: %v", err)
	}
	rpm := KeyLimits{RPM: 1}
	if _, err := l.admit("r", rpm, 1, now); err != nil {
		t.Fatal(err)
	}
	if _, err := l.admit("r", rpm, 1, now); err == nil {
		t.Fatal("admitted a second request of a one-a-minute key")
	}
	if _, err := l.admit("r", rpm, 1, now.Add(61*time.Second)); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

// TestLimiterSharesLimitsAmongReplicas: two replicas each keep half of a
// key's requests and tokens a minute, so together they admit the limit.
func TestLimiterSharesLimitsAmongReplicas(t *testing.T) {
	now := time.Now()
	two := func() int { return 2 }
	a, b := newLimiter(), newLimiter()
	a.replicas, b.replicas = two, two
	lim := KeyLimits{RPM: 10, TPM: 1000}
	admitted, tokens := 0, int64(0)
	for i := 0; i < 20; i++ {
		for _, l := range []*limiter{a, b} {
			if _, err := l.admit("k", lim, 50, now); err == nil {
				admitted++
				tokens += 50
			}
		}
	}
	if admitted != 10 || tokens > 1000 {
		t.Errorf("two replicas admitted %d requests (%d tokens) of a key limited to 10 a minute, want 10", admitted, tokens)
	}
	tpm := KeyLimits{TPM: 1000}
	admitted = 0
	for i := 0; i < 20; i++ {
		for _, l := range []*limiter{a, b} {
			if _, err := l.admit("t", tpm, 200, now); err == nil {
				admitted++
			}
		}
	}
	if admitted != 4 {
		t.Errorf("two replicas admitted %d calls of 200 tokens on a key of 1000 tokens a minute, want 4 (2 each of 500)", admitted)
	}
}

func TestCheckAnswer(t *testing.T) {
	rf := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","required":["a"]}}}`)
	answer := func(msg string) []byte { return []byte(`{"choices":[{"finish_reason":"stop","message":` + msg + `}]}`) }
	tests := []struct {
		raw  []byte
		rf   json.RawMessage
		want string
	}{
		{answer(`{"content":"{\"a\":1}"}`), rf, ""},
		{answer(`{"content":"{\"b\":1}"}`), rf, "answer does not match the response_format schema"},
		{answer(`{"content":"not json"}`), rf, "answer is not JSON"},
		{answer(`{"content":"  "}`), nil, "empty answer"},
		{answer(`{"content":null,"refusal":"no"}`), nil, "refused"},
		{answer(`{"content":null,"tool_calls":[{"id":"c"}]}`), rf, ""},
		{answer(`{"content":"fine"}`), nil, ""},
	}
	for _, tt := range tests {
		if got := checkAnswer(tt.raw, tt.rf); got != tt.want {
			t.Errorf("checkAnswer(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestRenameModelInStreamEvents(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`data: {"id":"c1","model":"gpt-x","choices":[]}` + "\n\n", `data: {"id":"c1","model":"small","choices":[]}` + "\n\n"},
		{`data: {"model": "gpt-x"}`, `data: {"model": "small"}`},
		// Content that quotes the member is escaped, so it is left alone.
		{`data: {"model":"gpt-x","choices":[{"delta":{"content":"say \"model\":\"gpt-x\""}}]}`,
			`data: {"model":"small","choices":[{"delta":{"content":"say \"model\":\"gpt-x\""}}]}`},
		{`data: [DONE]`, `data: [DONE]`},
		{`data: {"model":"gpt-x-2"}`, `data: {"model":"gpt-x-2"}`},
	} {
		if got := string(renameModel([]byte(tt.in), "gpt-x", "small")); got != tt.want {
			t.Errorf("renameModel(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
