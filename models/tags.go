package models

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// An agent tags a call with x-warden-metadata (a JSON object of strings)
// or the chat body's own "metadata" (OpenAI's member, forwarded as it
// is); the tags are stored with the call, redacted, and the Models page
// filters calls by one. The bounds are OpenAI's for metadata.
const (
	MaxTags        = 16
	MaxTagKeyLen   = 64  // bytes
	MaxTagValueLen = 512 // bytes
)

type tagsHeaderKey struct{}

// WithTagsHeader carries a request's x-warden-metadata header (as sent;
// "" when none) to the gateway, which checks it with the body's metadata
// before anything is reserved.
func WithTagsHeader(ctx context.Context, raw string) context.Context {
	if raw == "" {
		return ctx
	}
	return context.WithValue(ctx, tagsHeaderKey{}, raw)
}

// callTags are a call's tags: the body's metadata and the header's
// together, the header's value winning for a key in both. Tags beyond the
// bounds, or not an object of strings, are refused with 400 naming the
// problem.
func callTags(ctx context.Context, body json.RawMessage) (map[string]string, error) {
	tags, err := parseTags(body, `"metadata"`)
	if err != nil {
		return nil, err
	}
	if raw, _ := ctx.Value(tagsHeaderKey{}).(string); raw != "" {
		h, err := parseTags([]byte(raw), HeaderMetadata)
		if err != nil {
			return nil, err
		}
		if tags == nil {
			tags = map[string]string{}
		}
		for k, v := range h {
			tags[k] = v
		}
	}
	if len(tags) > MaxTags {
		return nil, invalid(fmt.Sprintf("A call has at most %d tags (%s and \"metadata\" together); this one has %d.", MaxTags, HeaderMetadata, len(tags)))
	}
	return tags, nil
}

// parseTags reads one source of tags (where names it in errors).
func parseTags(raw []byte, where string) (map[string]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return nil, nil
	}
	var all map[string]json.RawMessage
	if bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &all) != nil {
		return nil, invalid(where + " must be a JSON object of strings, such as {\"team\":\"support\"}.")
	}
	if len(all) > MaxTags {
		return nil, invalid(fmt.Sprintf("%s has %d keys; at most %d are kept.", where, len(all), MaxTags))
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := make(map[string]string, len(all))
	for _, k := range keys {
		switch {
		case k == "":
			return nil, invalid(where + " has an empty key.")
		case len(k) > MaxTagKeyLen:
			return nil, invalid(fmt.Sprintf("%s has a key of %d bytes (%q); a key has at most %d.", where, len(k), clipName(k), MaxTagKeyLen))
		}
		var v string
		if json.Unmarshal(all[k], &v) != nil {
			return nil, invalid(fmt.Sprintf("%s: the value of %q is not a string.", where, clipName(k)))
		}
		if len(v) > MaxTagValueLen {
			return nil, invalid(fmt.Sprintf("%s: the value of %q has %d bytes; a value has at most %d.", where, clipName(k), len(v), MaxTagValueLen))
		}
		tags[k] = v
	}
	return tags, nil
}

// storedMetadata is what is kept of a call's tags: their JSON object
// (keys in order), redacted; "" when there are none or no redactor.
func (g *Gateway) storedMetadata(tags map[string]string) string {
	if len(tags) == 0 || g.redactor == nil {
		return ""
	}
	raw, _ := json.Marshal(tags)
	out, err := g.redactor.JSON(raw)
	if err != nil {
		return ""
	}
	return string(out)
}

// Tag is one key=value the Models page filters calls by.
type Tag struct{ Key, Value string }

// ParseTag reads "key=value" (the Models page's filter); "" is no filter.
func ParseTag(s string) (Tag, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Tag{}, nil
	}
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || len(k) > MaxTagKeyLen || len(v) > MaxTagValueLen {
		return Tag{}, invalid(fmt.Sprintf("Filter calls by a tag as key=value (a key of at most %d bytes, a value of at most %d).", MaxTagKeyLen, MaxTagValueLen))
	}
	return Tag{Key: k, Value: strings.TrimSpace(v)}, nil
}

// needle is the tag as it appears in a stored metadata object: the
// redactor writes JSON compactly, strings encoded as encoding/json does.
func (t Tag) needle() string {
	k, _ := json.Marshal(t.Key)
	v, _ := json.Marshal(t.Value)
	return string(k) + ":" + string(v)
}
