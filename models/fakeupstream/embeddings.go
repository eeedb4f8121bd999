package fakeupstream

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Embeddings answers POST …/embeddings as OpenAI does: one vector per
// input (8 dimensions unless "dimensions" asks otherwise, derived from the
// input so equal inputs embed equally), as floats or base64, with usage:
// a token per four bytes of text and one more per input, or the length of
// a token array. The upstream model id chooses its behaviour as for chat:
// fail-500, fail-429, fail-400, hang, not-json, slow-MS, usage:P:C (reports
// P prompt tokens) and no-usage (reports none).
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON")
		return
	}
	switch {
	case req.Model == "fail-500":
		fail(w, http.StatusInternalServerError, "server_error", "injected failure")
		return
	case req.Model == "fail-429":
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusTooManyRequests, "rate_limit_error", "injected rate limit")
		return
	case req.Model == "fail-400":
		fail(w, http.StatusBadRequest, "invalid_request_error", "injected bad request")
		return
	case req.Model == "hang":
		<-r.Context().Done()
		return
	case req.Model == "not-json":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>not a model</body></html>"))
		return
	case strings.HasPrefix(req.Model, "slow-"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(req.Model, "slow-"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	// The input: a string, strings, a token array or token arrays.
	var keys []string
	prompt := 0
	var one string
	var many []string
	var tokens []int
	var tokenLists [][]int
	switch {
	case json.Unmarshal(req.Input, &one) == nil:
		many = []string{one}
		fallthrough
	case json.Unmarshal(req.Input, &many) == nil:
		for _, t := range many {
			keys = append(keys, t)
			prompt += len(t)/4 + 1
		}
		s.mu.Lock()
		s.embedded = append(s.embedded, many...)
		s.mu.Unlock()
	case json.Unmarshal(req.Input, &tokens) == nil:
		keys = append(keys, string(req.Input))
		prompt = len(tokens)
	case json.Unmarshal(req.Input, &tokenLists) == nil:
		for _, l := range tokenLists {
			b, _ := json.Marshal(l)
			keys = append(keys, string(b))
			prompt += len(l)
		}
	}
	if len(keys) == 0 {
		fail(w, http.StatusBadRequest, "invalid_request_error", "input is empty")
		return
	}
	dims := req.Dimensions
	if dims <= 0 {
		dims = 8
	}
	data := make([]any, len(keys))
	for i, k := range keys {
		v := vector(k, dims)
		var emb any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	answer := map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": prompt, "total_tokens": prompt}}
	if p, _, ok := liar(req.Model); ok {
		answer["usage"] = map[string]any{"prompt_tokens": p, "total_tokens": p}
	}
	if req.Model == "no-usage" {
		delete(answer, "usage")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

// vector is a unit vector of dims derived from key.
func vector(key string, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		h := fnv.New32a()
		_, _ = h.Write([]byte{byte(i), byte(i >> 8)})
		_, _ = h.Write([]byte(key))
		f := float64(h.Sum32())/math.MaxUint32*2 - 1
		v[i] = float32(f)
		norm += f * f
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(max(norm, 1e-12)))
	}
	return v
}

// Embedded lists the text inputs of the embeddings requests that arrived,
// in order (what left Warden).
func (s *Server) Embedded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.embedded...)
}
