package models

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of the answer cache, per process (each replica has its own).
const (
	cacheMaxEntries = 4096
	cacheMaxBytes   = 64 << 20 // answers held, in bytes
	cacheMaxAnswer  = 1 << 20  // a larger answer is not kept
)

// answerCache keeps answers to deterministic calls (see AliasSettings)
// under a key that includes the tenant, so tenants never share an entry.
// It is bounded by entries and bytes; the least recently used go first.
type answerCache struct {
	mu    sync.Mutex
	ll    *list.List // of *cacheEntry, most recently used first
	m     map[[32]byte]*list.Element
	bytes int
}

type cacheEntry struct {
	key        [32]byte
	body       []byte
	deployment string
	expires    time.Time
}

func newAnswerCache() *answerCache {
	return &answerCache{ll: list.New(), m: map[[32]byte]*list.Element{}}
}

func (c *answerCache) get(key [32]byte, now time.Time) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return cacheEntry{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.remove(el)
		return cacheEntry{}, false
	}
	c.ll.MoveToFront(el)
	return *e, true
}

// put keeps body for ttl, give or take a tenth (jitter: entries written
// together do not all expire together).
func (c *answerCache) put(key [32]byte, body []byte, deployment string, ttl time.Duration, now time.Time) {
	if len(body) > cacheMaxAnswer || ttl <= 0 {
		return
	}
	ttl = time.Duration(float64(ttl) * (0.9 + 0.2*rand.Float64()))
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.remove(el)
	}
	e := &cacheEntry{key: key, body: bytes.Clone(body), deployment: deployment, expires: now.Add(ttl)}
	c.m[key] = c.ll.PushFront(e)
	c.bytes += len(e.body)
	for c.ll.Len() > cacheMaxEntries || c.bytes > cacheMaxBytes {
		c.remove(c.ll.Back())
	}
}

func (c *answerCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.ll.Remove(el)
	delete(c.m, e.key)
	c.bytes -= len(e.body)
}

// canonNumbers writes every number of v one way: integers as written,
// others (0.0, 1e0) as the shortest form of their float64 value.
func canonNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = canonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonNumbers(e)
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			if f, err := x.Float64(); err == nil {
				return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
	}
	return v
}

// cacheKey is the cache key of a request: the tenant and the canonical
// request (members sorted at every level, numbers as written), without
// the members that do not change the answer (user, stream,
// stream_options). ok is false when the request is not deterministic:
// cached only at an explicit temperature 0 and not streamed.
func cacheKey(tenantID string, body []byte) (key [32]byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var req map[string]any
	if dec.Decode(&req) != nil {
		return key, false
	}
	if s, _ := req["stream"].(bool); s {
		return key, false
	}
	t, isNum := req["temperature"].(json.Number)
	if f, err := t.Float64(); !isNum || err != nil || f != 0 {
		return key, false
	}
	delete(req, "user")
	delete(req, "stream")
	delete(req, "stream_options")
	canon, err := json.Marshal(canonNumbers(req)) // map members are written sorted
	if err != nil {
		return key, false
	}
	h := sha256.New()
	h.Write([]byte(tenantID))
	h.Write([]byte{0})
	h.Write(canon)
	copy(key[:], h.Sum(nil))
	return key, true
}
