// Package releases keeps release bundles and the pointers that say which
// bundle each agent runs in each environment (docs/releases.md). It lives
// under agent/ because a release is the agent runtime's configuration:
// the runtime reads the active pointer at admission and records the
// digest on every journey; the console and the CLI only publish bundles
// and move pointers, through the functions here.
//
// A bundle names every behaviour-bearing surface by an immutable
// identifier, and is itself named by its digest. Nothing is edited in
// place: publishing adds a bundle, activation and rollback add a pointer
// row, and the newest row per agent and environment is the active one.
//
//	d, _, err := releases.Publish(ctx, db, author, bundle, "shorter prompt")
//	_, _, err = releases.Activate(ctx, db, author, releases.DefaultAgent, releases.DefaultEnv, d, "ship it")
//	p, err := releases.Active(ctx, db.Read(), releases.DefaultAgent, releases.DefaultEnv)
//	// later, from the history:
//	_, _, err = releases.Rollback(ctx, db, author, p.Agent, p.Env, earlier.Digest, "refund rate doubled")
package releases

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/canon"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// The agent and environment the runtime serves unless configured
// otherwise.
const (
	DefaultAgent = "support-agent"
	DefaultEnv   = "production"
)

// Bundle maps each behaviour-bearing surface to an immutable identifier:
// a content hash ("sha256:…", see ContentID) where Warden holds the
// content, or a pinned name where it does not (a model deployment).
type Bundle struct {
	Model    string `json:"model"`    // the model deployment, pinned
	Prompt   string `json:"prompt"`   // the system prompt
	Tools    string `json:"tools"`    // the tool catalog
	Routing  string `json:"routing"`  // the routing policy
	Approval string `json:"approval"` // the approval policy
	Skills   string `json:"skills"`   // the skill set
}

// Surfaces are the bundle's surfaces, in the order pages list them.
var Surfaces = []string{"model", "prompt", "tools", "routing", "approval", "skills"}

func (b Bundle) surface(name string) string {
	switch name {
	case "model":
		return b.Model
	case "prompt":
		return b.Prompt
	case "tools":
		return b.Tools
	case "routing":
		return b.Routing
	case "approval":
		return b.Approval
	case "skills":
		return b.Skills
	}
	return ""
}

// maxID bounds a surface's identifier.
const maxID = 200

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$`)

// Validate says which surfaces lack a usable identifier.
func (b Bundle) Validate() error {
	fields := map[string]string{}
	for _, s := range Surfaces {
		v := b.surface(s)
		switch {
		case v == "":
			fields[s] = "Name the " + s + " surface."
		case len(v) > maxID || !idPattern.MatchString(v):
			fields[s] = fmt.Sprintf("The %s identifier must be at most %d letters, digits and . _ : / @ + -.", s, maxID)
		}
	}
	if len(fields) > 0 {
		return &store.ValidationError{Fields: fields}
	}
	return nil
}

// Canonical is the bundle's canonical JSON: keys sorted, no white space.
func (b Bundle) Canonical() []byte {
	raw, err := json.Marshal(b)
	if err != nil {
		panic(err) // a struct of strings always marshals
	}
	canon, err := canon.JSON(raw)
	if err != nil {
		panic(err)
	}
	return canon
}

// Digest is "sha256:" and the SHA-256 of the canonical JSON, in hex: any
// change of one surface changes it; the order keys were written in does
// not.
func (b Bundle) Digest() string { return digestOf(b.Canonical()) }

func digestOf(canon []byte) string {
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ContentID is the identifier of content Warden holds: "sha256:" and the
// SHA-256 of v's canonical JSON.
func ContentID(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("content id: %w", err)
	}
	canon, err := canon.JSON(raw)
	if err != nil {
		return "", fmt.Errorf("content id: %w", err)
	}
	return digestOf(canon), nil
}

// Diff names the surfaces whose identifiers differ, in Surfaces order.
func Diff(a, b Bundle) []string {
	var out []string
	for _, s := range Surfaces {
		if a.surface(s) != b.surface(s) {
			out = append(out, s)
		}
	}
	return out
}

// Author is who publishes a bundle or moves a pointer.
type Author struct {
	Actor audit.Actor
	Name  string // as people see it
}

func (a Author) key() string { return a.Actor.Type + ":" + a.Actor.ID }

// Published is a stored bundle.
type Published struct {
	Digest    string
	Bundle    Bundle
	Author    string
	Note      string
	CreatedAt time.Time
}

// Pointer kinds.
const (
	KindActivated  = "activated"
	KindRolledBack = "rolled_back"
	// A canary's rows (canary.go): Digest stays the active release.
	KindCanaryStarted    = "canary_started"
	KindCanaryRolledBack = "canary_rolled_back"
	KindPromoted         = "promoted" // Digest is the promoted candidate
)

// Pointer is one row of a pointer's history.
type Pointer struct {
	ID        int64
	Agent     string
	Env       string
	Digest    string
	Kind      string
	Author    string // display name
	Reason    string
	CreatedAt time.Time
	// Candidate is the bundle a canary runs for Share percent of new
	// journeys ("" when no canary runs); Floor is the lower bound its
	// success rate must reach (CanaryGate).
	Candidate string
	Share     int
	Floor     float64
	// LabelGate: the candidate may be promoted only once a replay shows
	// it routes people's labelled journeys no worse than the active
	// release (docs/releases.md, "Route accuracy").
	LabelGate bool
}

// Errors people can act on.
var (
	ErrReasonRequired = problem.Unprocessable("reason_required", "Say why you are rolling back: the reason is kept in the release history and the audit trail.")
	ErrNotInHistory   = problem.Unprocessable("not_in_history", "Only a release this agent ran in this environment before can be rolled back to.")
)

// MaxReasonLen bounds a note or a reason.
const MaxReasonLen = 1000

// checkMove checks the target of a pointer change and its reason (trimmed,
// at most MaxReasonLen, and present when required), and returns the
// trimmed reason.
func checkMove(agent, env, reason string, required bool) (string, error) {
	reason = strings.TrimSpace(reason)
	if err := checkTarget(agent, env); err != nil {
		return "", err
	}
	if required && reason == "" {
		return "", ErrReasonRequired
	}
	if len(reason) > MaxReasonLen {
		return "", &store.ValidationError{Fields: map[string]string{"reason": fmt.Sprintf("Keep the reason under %d characters.", MaxReasonLen)}}
	}
	return reason, nil
}

var targetPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

func checkTarget(agent, env string) error {
	if !targetPattern.MatchString(agent) || !targetPattern.MatchString(env) {
		return &store.ValidationError{Fields: map[string]string{"agent": "Agent and environment are lower-case names such as support-agent and production."}}
	}
	return nil
}

// Publish stores b and the contents it carries (each must be the content
// its surface's identifier names; nil for none) with its audit event
// "release.published" and returns its digest. Publishing an identical
// bundle again stores and records nothing (created is false).
func Publish(ctx context.Context, db *store.DB, by Author, b Bundle, contents Contents, note string) (digest string, created bool, err error) {
	if err := b.Validate(); err != nil {
		return "", false, err
	}
	if err := checkContentsMatch(b, contents); err != nil {
		return "", false, err
	}
	note = strings.TrimSpace(note)
	if len(note) > MaxReasonLen {
		return "", false, &store.ValidationError{Fields: map[string]string{"note": fmt.Sprintf("Keep the note under %d characters.", MaxReasonLen)}}
	}
	canon := b.Canonical()
	digest = digestOf(canon)
	err = db.Transact(ctx, func(tx *store.Tx) error {
		created = false // a retried run starts afresh (store.Transact)
		if err := putContents(ctx, tx, contents); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO release_bundles (digest, body, published_by, author_name, note, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING`,
			digest, string(canon), by.key(), by.Name, note, store.FormatTime(time.Now()))
		if err != nil {
			return fmt.Errorf("publish release %s: %w", digest, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		created = true
		details := map[string]any{"bundle": json.RawMessage(canon), "note": note}
		if len(contents) > 0 {
			held := make([]string, 0, len(contents))
			for _, s := range Surfaces {
				if contents[s] != nil {
					held = append(held, s)
				}
			}
			details["contents"] = held
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release.published", Subject: audit.Subject{Type: "release", ID: digest}, Details: details,
		})
		return err
	})
	if err != nil {
		return "", false, err
	}
	return digest, created, nil
}

// PublishBuiltin stores the built-in bundle of this build of Warden, as
// Publish does but without an audit event: like the migrations, it is part
// of the binary, the same in every installation, not anyone's change. The
// chain records the first activation that points at it, and a fresh
// installation's chain stays empty until someone acts.
func PublishBuiltin(ctx context.Context, db *store.DB, b Bundle, contents Contents) (string, error) {
	if err := b.Validate(); err != nil {
		return "", err
	}
	if err := checkContentsMatch(b, contents); err != nil {
		return "", err
	}
	canon := b.Canonical()
	digest := digestOf(canon)
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if err := putContents(ctx, tx, contents); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO release_bundles (digest, body, published_by, author_name, note, created_at)
			VALUES (?, ?, 'system:builtin', 'Warden', 'the built-in release', ?) ON CONFLICT (digest) DO NOTHING`,
			digest, string(canon), store.FormatTime(time.Now()))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("publish the built-in release: %w", err)
	}
	return digest, nil
}

// Get loads a published bundle, or a 404.
func Get(ctx context.Context, q store.Querier, digest string) (Published, error) {
	var p Published
	var body, at string
	err := q.QueryRowContext(ctx, `SELECT digest, body, author_name, note, created_at FROM release_bundles WHERE digest = ?`, digest).
		Scan(&p.Digest, &body, &p.Author, &p.Note, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Published{}, problem.NotFound("no_release", "No release "+digest+" was published.")
	}
	if err != nil {
		return Published{}, fmt.Errorf("release %s: %w", digest, err)
	}
	if err := json.Unmarshal([]byte(body), &p.Bundle); err != nil {
		return Published{}, fmt.Errorf("release %s: %w", digest, err)
	}
	p.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	return p, nil
}

// Activate makes digest the agent's active release in env. Rollback does
// the same to a release the agent ran there before, and needs a reason.
// Each adds one pointer row with its audit event ("release.activated",
// "release.rolled_back") in one transaction. When digest is already
// active nothing is added (changed is false): pressing twice has one
// effect.
func Activate(ctx context.Context, db *store.DB, by Author, agent, env, digest, reason string) (Pointer, bool, error) {
	return move(ctx, db, by, Move{Agent: agent, Env: env, To: digest, Reason: reason}, KindActivated)
}

// Rollback: see Activate.
func Rollback(ctx context.Context, db *store.DB, by Author, agent, env, digest, reason string) (Pointer, bool, error) {
	return move(ctx, db, by, Move{Agent: agent, Env: env, To: digest, Reason: reason}, KindRolledBack)
}

// Move is a pointer change a person confirmed: from the release they saw
// active (From; NoneActive when none was) to To. An empty From checks
// nothing.
type Move struct {
	Agent, Env string
	From, To   string
	Reason     string
}

// NoneActive is Move.From when no release was active.
const NoneActive = "none"

// ErrMovedMeanwhile: someone else changed the active release after the
// confirmation page was shown, so the diff the person confirmed is stale.
var ErrMovedMeanwhile = problem.Conflict("release_moved", "The active release changed since this page was opened; nothing was changed. Look at the releases page again and confirm from there.")

// ActivateConfirmed and RollbackConfirmed move the pointer as Activate and
// Rollback do, but only while m.From is still the active release (409
// release_moved otherwise): a person confirms one diff, never another.
// Pressing twice still has one effect.
func ActivateConfirmed(ctx context.Context, db *store.DB, by Author, m Move) (Pointer, bool, error) {
	return move(ctx, db, by, m, KindActivated)
}

// RollbackConfirmed: see ActivateConfirmed.
func RollbackConfirmed(ctx context.Context, db *store.DB, by Author, m Move) (Pointer, bool, error) {
	return move(ctx, db, by, m, KindRolledBack)
}

func move(ctx context.Context, db *store.DB, by Author, m Move, kind string) (Pointer, bool, error) {
	agent, env, digest := m.Agent, m.Env, m.To
	reason, err := checkMove(agent, env, m.Reason, kind == KindRolledBack)
	if err != nil {
		return Pointer{}, false, err
	}
	var p Pointer
	changed := false
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		if _, err := Get(ctx, tx, digest); err != nil {
			return err
		}
		cur, err := Active(ctx, tx, agent, env)
		switch {
		case err == nil && cur.Digest == digest:
			p = cur
			return nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		case m.From == NoneActive && err == nil, m.From != "" && m.From != NoneActive && cur.Digest != m.From:
			return ErrMovedMeanwhile
		}
		if kind == KindRolledBack {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM release_pointers WHERE agent = ? AND env = ? AND digest = ?`,
				agent, env, digest).Scan(&n); err != nil {
				return fmt.Errorf("release history: %w", err)
			}
			if n == 0 {
				return ErrNotInHistory
			}
		}
		now := time.Now()
		res, err := tx.ExecContext(ctx, `INSERT INTO release_pointers (agent, env, digest, kind, author, author_name, reason, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, agent, env, digest, kind, by.key(), by.Name, reason, store.FormatTime(now))
		if err != nil {
			return fmt.Errorf("move release pointer: %w", err)
		}
		id, _ := res.LastInsertId()
		p = Pointer{ID: id, Agent: agent, Env: env, Digest: digest, Kind: kind, Author: by.Name, Reason: reason, CreatedAt: now.UTC()}
		changed = true
		details := map[string]any{"agent": agent, "env": env, "digest": digest, "reason": reason}
		if cur.Digest != "" {
			details["previous"] = cur.Digest
		}
		if cur.Candidate != "" {
			// The new row carries no candidate: moving the pointer ends a canary.
			details["canary_ended"] = cur.Candidate
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release." + kind, Subject: audit.Subject{Type: "release", ID: digest}, Details: details,
		})
		return err
	})
	return p, changed, err
}

const selectPointer = `SELECT id, agent, env, digest, kind, author_name, reason, created_at, candidate, share, floor, label_gate FROM release_pointers`

func scanPointer(row store.Scanner) (Pointer, error) {
	var p Pointer
	var at string
	var gate int
	if err := row.Scan(&p.ID, &p.Agent, &p.Env, &p.Digest, &p.Kind, &p.Author, &p.Reason, &at, &p.Candidate, &p.Share, &p.Floor, &gate); err != nil {
		return Pointer{}, err
	}
	p.LabelGate = gate == 1
	p.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	return p, nil
}

// Active is the newest pointer row of agent in env (one indexed read), with
// the canary's candidate when one runs (Pointer.DigestFor), or
// store.ErrNotFound when none was ever activated.
func Active(ctx context.Context, q store.Querier, agent, env string) (Pointer, error) {
	p, err := store.Get(ctx, q, scanPointer, selectPointer+` WHERE agent = ? AND env = ? ORDER BY id DESC LIMIT 1`, agent, env)
	if errors.Is(err, store.ErrNotFound) {
		return Pointer{}, err
	}
	if err != nil {
		return Pointer{}, fmt.Errorf("active release of %s/%s: %w", agent, env, err)
	}
	return p, nil
}

// History is a page of agent's pointer rows in env, newest first.
func History(ctx context.Context, q store.Querier, agent, env string, page store.Page) (store.Paged[Pointer], error) {
	order := store.Order{Key: "id", KeyDesc: true, ID: "id", IDDesc: true, Numeric: true}
	where, args := page.Where(order)
	query := selectPointer + ` WHERE agent = ? AND env = ?`
	args = append([]any{agent, env}, args...)
	if where != "" {
		query += " AND " + where
	}
	out, err := store.Query(ctx, q, scanPointer, query+" ORDER BY "+page.OrderBy(order)+" LIMIT ?", append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[Pointer]{}, fmt.Errorf("release history of %s/%s: %w", agent, env, err)
	}
	return store.Paginate(page, out, func(p Pointer) store.Cursor {
		id := fmt.Sprint(p.ID)
		return store.Cursor{Key: id, ID: id}
	}), nil
}

// Target is an agent and environment that has a pointer.
type Target struct{ Agent, Env string }

// Targets lists the agents and environments with a pointer.
func Targets(ctx context.Context, q store.Querier) ([]Target, error) {
	out, err := store.Query(ctx, q, func(s store.Scanner) (Target, error) {
		var t Target
		err := s.Scan(&t.Agent, &t.Env)
		return t, err
	}, `SELECT DISTINCT agent, env FROM release_pointers ORDER BY agent, env`)
	if err != nil {
		return nil, fmt.Errorf("release targets: %w", err)
	}
	return out, nil
}

// Recent are the digests of the newest published bundles, newest first:
// the candidates a canary may start with.
func Recent(ctx context.Context, q store.Querier, limit int) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT digest FROM release_bundles ORDER BY created_at DESC, digest LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent releases: %w", err)
	}
	return out, nil
}

// Ran lists the bundles agent ran in env, newest first, once each (at
// most 100).
func Ran(ctx context.Context, q store.Querier, agent, env string) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT digest FROM release_pointers WHERE agent = ? AND env = ?
		GROUP BY digest ORDER BY MAX(id) DESC LIMIT 100`, agent, env)
	if err != nil {
		return nil, fmt.Errorf("releases of %s in %s: %w", agent, env, err)
	}
	return out, nil
}

// Earlier reports whether target first ran for agent in env before
// current did: pointing back at it is a rollback; pointing at a release
// that first ran after current (one rolled back from) rolls forward. A
// target that never ran is not earlier.
func Earlier(ctx context.Context, q store.Querier, agent, env, current, target string) (bool, error) {
	first := func(digest string) (int64, error) {
		var id *int64
		if err := q.QueryRowContext(ctx, `SELECT MIN(id) FROM release_pointers WHERE agent = ? AND env = ? AND digest = ?`,
			agent, env, digest).Scan(&id); err != nil {
			return 0, fmt.Errorf("release history: %w", err)
		}
		if id == nil {
			return -1, nil
		}
		return *id, nil
	}
	t, err := first(target)
	if err != nil || t < 0 {
		return false, err
	}
	c, err := first(current)
	if err != nil {
		return false, err
	}
	return c < 0 || t < c, nil
}
