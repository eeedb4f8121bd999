package releases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Replay is a stored dry run of a candidate release over recorded
// journeys (the runtime makes the report; this package keeps it, so the
// canary that follows can link the evidence it started on).
type Replay struct {
	ID        string
	Agent     string
	Env       string
	Candidate string
	Skill     string
	Requested int // journeys asked for
	Replayed  int // journeys found and replayed
	Agreed    int // routed to the same skill
	// Against people's labels (routelabels): of Labelled journeys, the
	// candidate routed LabelledRight right and Active (the release active
	// when the replay ran) ActiveRight.
	Active        string
	Labelled      int
	LabelledRight int
	ActiveRight   int
	Report        json.RawMessage
	Author        string // display name
	CreatedAt     time.Time
}

// Rate is the route agreement rate, 0 with nothing replayed.
func (r Replay) Rate() float64 {
	if r.Replayed == 0 {
		return 0
	}
	return float64(r.Agreed) / float64(r.Replayed)
}

// SaveReplay keeps a replay with its audit event "release.replayed" and
// returns its id.
func SaveReplay(ctx context.Context, db *store.DB, by Author, r Replay) (string, error) {
	if err := checkTarget(r.Agent, r.Env); err != nil {
		return "", err
	}
	r.ID = "rpl_" + store.NewID()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := Get(ctx, tx, r.Candidate); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO release_replays
			(id, agent, env, candidate, skill, requested, replayed, agreed, report, author, author_name, created_at,
				active_digest, labelled, labelled_right, active_right)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Agent, r.Env, r.Candidate, r.Skill, r.Requested, r.Replayed, r.Agreed, string(r.Report),
			by.key(), by.Name, store.FormatTime(time.Now()), r.Active, r.Labelled, r.LabelledRight, r.ActiveRight); err != nil {
			return fmt.Errorf("store replay: %w", err)
		}
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release.replayed", Subject: audit.Subject{Type: "replay", ID: r.ID},
			Details: map[string]any{"agent": r.Agent, "env": r.Env, "candidate": r.Candidate, "skill": r.Skill,
				"requested": r.Requested, "replayed": r.Replayed, "agreed": r.Agreed,
				"labelled": r.Labelled, "labelled_right": r.LabelledRight, "active": r.Active, "active_right": r.ActiveRight},
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

const selectReplay = `SELECT id, agent, env, candidate, skill, requested, replayed, agreed, report, author_name, created_at,
	active_digest, labelled, labelled_right, active_right FROM release_replays`

func scanReplay(row store.Scanner) (Replay, error) {
	var r Replay
	var report, at string
	if err := row.Scan(&r.ID, &r.Agent, &r.Env, &r.Candidate, &r.Skill, &r.Requested, &r.Replayed, &r.Agreed, &report, &r.Author, &at,
		&r.Active, &r.Labelled, &r.LabelledRight, &r.ActiveRight); err != nil {
		return Replay{}, err
	}
	r.Report = json.RawMessage(report)
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	return r, nil
}

// LabelRate is the candidate's route accuracy on the labelled journeys,
// 0 with none.
func (r Replay) LabelRate() float64 {
	if r.Labelled == 0 {
		return 0
	}
	return float64(r.LabelledRight) / float64(r.Labelled)
}

// ActiveLabelRate is the active release's, on the same journeys.
func (r Replay) ActiveLabelRate() float64 {
	if r.Labelled == 0 {
		return 0
	}
	return float64(r.ActiveRight) / float64(r.Labelled)
}

// GetReplay loads a stored replay, or a 404.
func GetReplay(ctx context.Context, q store.Querier, id string) (Replay, error) {
	r, err := store.Get(ctx, q, scanReplay, selectReplay+` WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Replay{}, problem.NotFound("no_replay", "No replay "+id+" was kept.")
	}
	if err != nil {
		return Replay{}, fmt.Errorf("replay %s: %w", id, err)
	}
	return r, nil
}

// ReplaysOf lists the newest replays of candidate made at or before
// before (the zero time for all), newest first, at most limit: the
// evidence a canary of candidate started on is the first.
func ReplaysOf(ctx context.Context, q store.Querier, candidate string, before time.Time, limit int) ([]Replay, error) {
	query, args := selectReplay+` WHERE candidate = ?`, []any{candidate}
	if !before.IsZero() {
		query += ` AND created_at <= ?`
		args = append(args, store.FormatTime(before))
	}
	return queryReplays(ctx, q, "replays of "+candidate, query+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit)...)
}

// RecentReplays lists the newest replays for agent in env, newest first.
func RecentReplays(ctx context.Context, q store.Querier, agent, env string, limit int) ([]Replay, error) {
	return queryReplays(ctx, q, "replays of "+agent+"/"+env,
		selectReplay+` WHERE agent = ? AND env = ? ORDER BY created_at DESC, id DESC LIMIT ?`, agent, env, limit)
}

func queryReplays(ctx context.Context, q store.Querier, what, query string, args ...any) ([]Replay, error) {
	out, err := store.Query(ctx, q, scanReplay, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
