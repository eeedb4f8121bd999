package releases

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/canon"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Contents are the contents of a bundle's surfaces that Warden holds, by
// surface name. A surface with content is named by the content's hash
// (ContentID), and the runtime runs under it (Behaviour): the routing
// policy and the skill set decide how journeys are routed, so rolling
// back a release rolls back its routing.
type Contents map[string]json.RawMessage

// contentSurfaces are the surfaces whose content a bundle may carry. The
// model is a pinned deployment name, never content.
var contentSurfaces = []string{"prompt", "tools", "routing", "approval", "skills"}

// RoutingPolicy is the content of the routing surface: which router and
// the lowest score at which it accepts a skill.
type RoutingPolicy struct {
	Router    string  `json:"router"`    // "keyword", the one router this Warden has
	Threshold float64 `json:"threshold"` // in (0, 1]
}

// Behaviour is what a release changes in how the runtime runs journeys.
// Zero values mean "as built in": a release whose surfaces Warden holds
// no content for runs like the built-in release.
type Behaviour struct {
	Threshold float64  // the router's threshold; 0 for the router's own
	Skills    []string // the skills that may be routed to; nil for all
	Prompt    string   // the system prompt, "" when none is held
}

// Allows reports whether the release lets journeys be routed to skill.
func (b Behaviour) Allows(skill string) bool {
	if b.Skills == nil {
		return true
	}
	for _, s := range b.Skills {
		if s == skill {
			return true
		}
	}
	return false
}

// Parse reads a bundle file strictly: the six surfaces, and optionally
// "contents", the content of surfaces Warden holds. A surface with
// content may omit its identifier (it is the content's hash) or must name
// exactly that hash. Unknown surfaces are refused, every surface is
// required, and routing and skills contents must be well formed.
func Parse(raw []byte) (Bundle, Contents, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f struct {
		Bundle
		Contents map[string]json.RawMessage `json:"contents"`
	}
	if err := dec.Decode(&f); err != nil {
		return Bundle{}, nil, problem.Invalid("bad_bundle", "The bundle is not a JSON object of the surfaces "+strings.Join(Surfaces, ", ")+
			" (and optionally \"contents\"): "+err.Error())
	}
	if dec.More() {
		return Bundle{}, nil, problem.Invalid("bad_bundle", "The bundle must be one JSON object.")
	}
	b := f.Bundle
	contents := Contents{}
	fields := map[string]string{}
	names := make([]string, 0, len(f.Contents))
	for s := range f.Contents {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		canon, id, err := checkContent(s, f.Contents[s])
		if err != nil {
			fields[s] = err.Error()
			continue
		}
		switch cur := b.surface(s); {
		case cur == "":
			b.set(s, id)
		case cur != id:
			fields[s] = fmt.Sprintf("The %s identifier %s is not the hash of its content, %s: leave it out or correct it.", s, cur, id)
			continue
		}
		contents[s] = canon
	}
	if len(fields) > 0 {
		return Bundle{}, nil, &store.ValidationError{Fields: fields}
	}
	return b, contents, b.Validate()
}

func (b *Bundle) set(name, id string) {
	switch name {
	case "prompt":
		b.Prompt = id
	case "tools":
		b.Tools = id
	case "routing":
		b.Routing = id
	case "approval":
		b.Approval = id
	case "skills":
		b.Skills = id
	}
}

// checkContent checks the content of surface s and returns its canonical
// JSON and identifier.
func checkContent(s string, raw json.RawMessage) (json.RawMessage, string, error) {
	known := false
	for _, c := range contentSurfaces {
		known = known || c == s
	}
	if !known {
		return nil, "", fmt.Errorf("Warden holds no content for %q: contents may name %s.", s, strings.Join(contentSurfaces, ", "))
	}
	switch s {
	case "routing":
		if _, err := parseRouting(raw); err != nil {
			return nil, "", err
		}
	case "skills":
		if _, err := parseSkills(raw); err != nil {
			return nil, "", err
		}
	case "prompt":
		var p string
		if json.Unmarshal(raw, &p) != nil || strings.TrimSpace(p) == "" {
			return nil, "", errors.New("The prompt is a non-empty JSON string.")
		}
	}
	canon, err := canon.JSON(raw)
	if err != nil {
		return nil, "", fmt.Errorf("The %s content is not JSON: %v", s, err)
	}
	return canon, digestOf(canon), nil
}

func parseRouting(raw json.RawMessage) (RoutingPolicy, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p RoutingPolicy
	if err := dec.Decode(&p); err != nil {
		return RoutingPolicy{}, errors.New(`The routing policy is {"router": "keyword", "threshold": a number above 0 and at most 1}.`)
	}
	if p.Router != "keyword" {
		return RoutingPolicy{}, fmt.Errorf("The routing policy's router must be \"keyword\", the one router this Warden has, not %q.", p.Router)
	}
	if !(p.Threshold > 0 && p.Threshold <= 1) {
		return RoutingPolicy{}, errors.New("The routing policy's threshold must be above 0 and at most 1.")
	}
	return p, nil
}

// SkillEntry is one skill of a release's skill set in its hashed form:
// the skill's name and the SHA-256 (hex) of its SKILL.md, so that a change
// to any skill file changes the skill set's identifier, and the digest.
type SkillEntry struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

var skillHashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// parseSkills reads a skill set, the names of the skills that may be
// routed to. It is written either as a JSON array of names (releases
// published before skills were files) or as an array of SkillEntry.
func parseSkills(raw json.RawMessage) ([]string, error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var entries []SkillEntry
		if dec.Decode(&entries) != nil {
			return nil, errors.New(`The skill set is a JSON array of one or more skill names, or of {"name", "hash"} objects.`)
		}
		names = make([]string, 0, len(entries))
		for _, e := range entries {
			if !skillHashPattern.MatchString(e.Hash) {
				return nil, fmt.Errorf("The skill set's hash of %q is not a SHA-256 in lower-case hex.", e.Name)
			}
			names = append(names, e.Name)
		}
	}
	if len(names) == 0 {
		return nil, errors.New(`The skill set is a JSON array of one or more skill names, or of {"name", "hash"} objects.`)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !targetPattern.MatchString(n) || seen[n] {
			return nil, fmt.Errorf("The skill set names %q twice or not as a skill name (lower-case letters, digits, _ and -).", n)
		}
		seen[n] = true
	}
	return names, nil
}

// ContentsOf encodes values by surface as Contents, for releases built in
// code (the built-in and demo releases).
func ContentsOf(values map[string]any) (Contents, error) {
	out := Contents{}
	for s, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("content of %s: %w", s, err)
		}
		canon, _, err := checkContent(s, raw)
		if err != nil {
			return nil, err
		}
		out[s] = canon
	}
	return out, nil
}

// putContents stores contents (each under its hash) in tx; contents
// already held are left as they are.
func putContents(ctx context.Context, tx *store.Tx, contents Contents) error {
	now := store.FormatTime(time.Now())
	for s, body := range contents {
		canon, id, err := checkContent(s, body)
		if err != nil {
			return &store.ValidationError{Fields: map[string]string{s: err.Error()}}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO release_contents (id, body, created_at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, id, string(canon), now); err != nil {
			return fmt.Errorf("store %s content: %w", s, err)
		}
	}
	return nil
}

// checkContentsMatch refuses contents whose hash is not the bundle's
// identifier for that surface.
func checkContentsMatch(b Bundle, contents Contents) error {
	fields := map[string]string{}
	for s, body := range contents {
		_, id, err := checkContent(s, body)
		switch {
		case err != nil:
			fields[s] = err.Error()
		case b.surface(s) != id:
			fields[s] = fmt.Sprintf("The %s identifier is not the hash of its content (%s).", s, id)
		}
	}
	if len(fields) > 0 {
		return &store.ValidationError{Fields: fields}
	}
	return nil
}

// Content is the content stored under id, or store.ErrNotFound when
// Warden holds none (the surface names something outside Warden, or was
// published without its content).
func Content(ctx context.Context, q store.Querier, id string) (json.RawMessage, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT body FROM release_contents WHERE id = ?`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("release content %s: %w", id, err)
	}
	return json.RawMessage(body), nil
}

// LoadBehaviour is the behaviour of the release digest: its routing
// policy and skill set where Warden holds their contents. Bundles and
// contents are immutable, so callers may cache the result by digest.
func LoadBehaviour(ctx context.Context, q store.Querier, digest string) (Behaviour, error) {
	p, err := Get(ctx, q, digest)
	if err != nil {
		return Behaviour{}, err
	}
	var out Behaviour
	if raw, err := Content(ctx, q, p.Bundle.Routing); err == nil {
		pol, err := parseRouting(raw)
		if err != nil {
			return Behaviour{}, fmt.Errorf("release %s: %w", digest, err)
		}
		out.Threshold = pol.Threshold
	} else if !errors.Is(err, store.ErrNotFound) {
		return Behaviour{}, err
	}
	if raw, err := Content(ctx, q, p.Bundle.Skills); err == nil {
		if out.Skills, err = parseSkills(raw); err != nil {
			return Behaviour{}, fmt.Errorf("release %s: %w", digest, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return Behaviour{}, err
	}
	if raw, err := Content(ctx, q, p.Bundle.Prompt); err == nil {
		_ = json.Unmarshal(raw, &out.Prompt)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Behaviour{}, err
	}
	return out, nil
}

// ContentText is the content of a surface identifier as people read it
// (indented JSON, a prompt as its text), or "" when Warden holds none.
func ContentText(ctx context.Context, q store.Querier, id string) (string, error) {
	raw, err := Content(ctx, q, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw), nil
	}
	return b.String(), nil
}
