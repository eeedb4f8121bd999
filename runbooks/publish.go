package runbooks

// Publishing buttons (docs/runbooks.md, docs/changes.md kind
// runbook.publish). A runbook file in the runbook directory is written by
// whoever can write that directory, not by two admins; its buttons reach
// switches, budgets and releases. So a directory runbook's button runs
// only once a second admin published exactly its definition — its label,
// tool and arguments, hashed as Digest — and is held (shown, refused)
// until then, and again whenever its file changes it. The embedded
// runbooks ship in the binary and count as published.
//
//	held, _ := runbooks.Held(ctx, q, rb)              // action id → why, for the page
//	err := runbooks.CheckPublished(ctx, q, rb, a)     // Run refuses a held button (409)
//	pr, _ := runbooks.PublishProposal(ctx, q, rb)     // a pending change for a second admin
//	err = runbooks.Publish(ctx, db, set, by, after)   // the change's applier, on approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/canon"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Digest is the SHA-256 of the canonical JSON of what decides what a press
// does and what on-call reads before pressing: the button's label, tool
// and arguments (parameters such as "$tool" as written). Its description
// and the document around it do not change what runs.
func Digest(a Action) string {
	raw, _ := json.Marshal(map[string]any{"label": a.Label, "tool": a.Tool, "args": a.Args})
	c, _ := canon.JSON(raw)
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// embeddedDigests are the embedded runbooks' buttons (runbook, action →
// digest): trusted as shipped, so a directory file that replaces a
// default keeps the default's unchanged buttons live.
var embeddedDigests = sync.OnceValue(func() map[[2]string]string {
	out := map[[2]string]string{}
	set, _ := Load(nil)
	for _, rb := range set.All() {
		for _, a := range rb.Actions {
			out[[2]string{rb.ID, a.ID}] = Digest(a)
		}
	}
	return out
})

// embedded reports whether a is one of the embedded runbook rb's buttons
// exactly as shipped.
func embedded(rb Runbook, a Action) bool {
	d, ok := embeddedDigests()[[2]string{rb.ID, a.ID}]
	return ok && d == Digest(a)
}

// Published is a button as a second admin published it.
type Published struct {
	changes.Button
	Change         string // the change that published it; "" by break glass
	ApprovedBy     string
	ApprovedByName string
	ApprovedAt     time.Time
}

func scanPublished(row store.Scanner) (Published, error) {
	var p Published
	var args, at string
	if err := row.Scan(&p.ID, &p.Digest, &p.Label, &p.Tool, &args, &p.Change, &p.ApprovedBy, &p.ApprovedByName, &at); err != nil {
		return Published{}, err
	}
	if err := json.Unmarshal([]byte(args), &p.Args); err != nil {
		return Published{}, fmt.Errorf("published button %s: %w", p.ID, err)
	}
	p.ApprovedAt, _ = time.Parse(time.RFC3339Nano, at)
	return p, nil
}

// PublishedButtons lists the buttons of runbook id that are published, by
// action id.
func PublishedButtons(ctx context.Context, q store.Querier, id string) ([]Published, error) {
	out, err := store.Query(ctx, q, scanPublished, `SELECT action, digest, label, tool, args_json, change_id, approved_by, approved_by_name, approved_at
		FROM runbook_buttons WHERE runbook = ? ORDER BY action`, id)
	if err != nil {
		return nil, fmt.Errorf("published buttons of runbook %s: %w", id, err)
	}
	return out, nil
}

// PublishedValue is runbook id's published buttons as the runbook.publish
// change's before value.
func PublishedValue(ctx context.Context, q store.Querier, id string) (changes.Buttons, error) {
	rows, err := PublishedButtons(ctx, q, id)
	if err != nil {
		return changes.Buttons{}, err
	}
	v := changes.Buttons{Runbook: id, Buttons: []changes.Button{}}
	for _, p := range rows {
		v.Buttons = append(v.Buttons, p.Button)
	}
	return v, nil
}

// fileValue is the runbook's buttons as its file defines them, leaving
// out the embedded ones exactly as shipped (they need no publishing).
func fileValue(rb Runbook) changes.Buttons {
	v := changes.Buttons{Runbook: rb.ID, Buttons: []changes.Button{}}
	for _, a := range rb.Actions {
		if embedded(rb, a) {
			continue
		}
		v.Buttons = append(v.Buttons, changes.Button{ID: a.ID, Label: a.Label, Tool: a.Tool, Args: a.Args, Digest: Digest(a)})
	}
	sort.Slice(v.Buttons, func(i, j int) bool { return v.Buttons[i].ID < v.Buttons[j].ID })
	return v
}

// Held says which of rb's buttons wait for a second admin to publish
// them, by action id, each with why in words; empty when every button may
// be pressed.
func Held(ctx context.Context, q store.Querier, rb Runbook) (map[string]string, error) {
	file := fileValue(rb)
	if len(file.Buttons) == 0 {
		return nil, nil
	}
	published, err := PublishedValue(ctx, q, rb.ID)
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for _, b := range file.Buttons {
		switch was := published.Find(b.ID); {
		case was == nil:
			held[b.ID] = "it is new in " + rb.Source + " and no second admin has published it yet"
		case was.Digest != b.Digest:
			held[b.ID] = "its definition in " + rb.Source + " changed since it was published (it was " + Describe(*was) + ")"
		}
	}
	return held, nil
}

// HeldCounts is how many buttons each runbook of set holds back, by
// runbook id (runbooks without any are left out): for the Runbooks list.
func HeldCounts(ctx context.Context, q store.Querier, set *Set) (map[string]int, error) {
	out := map[string]int{}
	for _, rb := range set.All() {
		held, err := Held(ctx, q, rb)
		if err != nil {
			return nil, err
		}
		if len(held) > 0 {
			out[rb.ID] = len(held)
		}
	}
	return out, nil
}

// ErrHeld refuses the press of a held button: nothing ran.
func ErrHeld(why string) *problem.Error {
	return problem.Conflict("button_held", "This button waits for a second admin to publish it: "+why+
		". Nothing ran. An admin asks to publish it on the runbook's page (Publish buttons) and another admin approves it on Changes.").
		Titled("This button is not published yet")
}

// CheckPublished refuses (ErrHeld, a 409) a button of rb that waits for
// a second admin to publish it.
func CheckPublished(ctx context.Context, q store.Querier, rb Runbook, a Action) error {
	if embedded(rb, a) {
		return nil
	}
	held, err := Held(ctx, q, rb)
	if err != nil {
		return err
	}
	if why, ok := held[a.ID]; ok {
		return ErrHeld(why)
	}
	return nil
}

// ErrNothingToPublish refuses a publish of a runbook none of whose
// buttons are held.
var ErrNothingToPublish = problem.Conflict("nothing_to_publish", "Every button of this runbook is published already: there is nothing to publish.")

// PublishProposal is the governed change that publishes rb's buttons as
// its file defines them now: before is what is published, after the
// file's buttons. It loosens (a second admin approves) whenever a button
// is held; with none held it is ErrNothingToPublish.
func PublishProposal(ctx context.Context, q store.Querier, rb Runbook) (changes.Proposal, error) {
	held, err := Held(ctx, q, rb)
	if err != nil {
		return changes.Proposal{}, err
	}
	if len(held) == 0 {
		return changes.Proposal{}, ErrNothingToPublish
	}
	before, err := PublishedValue(ctx, q, rb.ID)
	if err != nil {
		return changes.Proposal{}, err
	}
	after := fileValue(rb)
	var labels []string
	for _, b := range after.Buttons {
		if _, ok := held[b.ID]; ok {
			labels = append(labels, curly(b.Label))
		}
	}
	noun := "button"
	if len(labels) > 1 {
		noun = "buttons"
	}
	return changes.Proposal{Kind: changes.RunbookPublish, Subject: rb.ID,
		Summary: "Publish the " + noun + " " + strings.Join(labels, ", ") + " of runbook " + rb.Title + " (" + rb.Source + ")",
		Before:  before, After: after}, nil
}

// curly quotes a label in a sentence.
func curly(s string) string { return "“" + s + "”" }

// Publisher is who made buttons live: the second admin who approved the
// change (Change), or the admin who broke the glass (Change "").
type Publisher struct {
	ID     string
	Name   string
	Change string
}

// Publish makes after's buttons the published ones of its runbook, in
// one transaction with its runbook.publish audit event: the rows of
// buttons no longer in after go (removing a button needs nothing), the
// others are replaced. Only if the runbook as loaded (set) still defines
// every button of after exactly so: a file changed since the change was
// asked for is refused in words and nothing is published, since the
// approver saw other buttons. Buttons become pressable at once; Run reads
// the table at every press.
func Publish(ctx context.Context, db *store.DB, set *Set, by Publisher, after changes.Buttons) error {
	if set == nil {
		return errors.New("publish runbook buttons: the runbooks are not loaded yet")
	}
	rb, ok := set.Get(after.Runbook)
	if !ok {
		return problem.Conflict("runbook_gone", "Runbook "+after.Runbook+" is no longer loaded (its file was removed or cannot be read): nothing was published.")
	}
	file := fileValue(rb)
	var moved []string
	for _, b := range after.Buttons {
		now := file.Find(b.ID)
		switch {
		case now == nil:
			moved = append(moved, curly(b.Label)+" is no longer in the file")
		case now.Digest != b.Digest:
			moved = append(moved, curly(b.Label)+" is now "+Describe(*now))
		}
	}
	if len(moved) > 0 {
		return problem.Conflict("runbook_changed", "Runbook "+rb.Title+"'s file ("+rb.Source+") changed since this was asked for: "+
			strings.Join(moved, "; ")+". Nothing was published: ask to publish again, so the second admin approves what the file holds now.")
	}
	now := time.Now().UTC()
	return db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runbook_buttons WHERE runbook = ?`, rb.ID); err != nil {
			return fmt.Errorf("publish runbook %s: %w", rb.ID, err)
		}
		var shown []map[string]any
		for _, b := range after.Buttons {
			args, err := json.Marshal(b.Args)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO runbook_buttons (runbook, action, digest, label, tool, args_json, change_id, approved_by, approved_by_name, approved_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rb.ID, b.ID, b.Digest, b.Label, b.Tool, string(args), by.Change, by.ID, by.Name, store.FormatTime(now)); err != nil {
				return fmt.Errorf("publish runbook %s button %s: %w", rb.ID, b.ID, err)
			}
			shown = append(shown, map[string]any{"action": b.ID, "label": b.Label, "tool": b.Tool, "args": ArgsText(b.Args), "digest": b.Digest})
		}
		labels := make([]string, 0, len(after.Buttons))
		for _, b := range after.Buttons {
			labels = append(labels, b.Label)
		}
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorPrincipal, ID: by.ID}, Verb: "runbook.publish",
			Subject: audit.Subject{Type: "runbook", ID: rb.ID},
			Details: map[string]any{"runbook": rb.ID, "title": rb.Title, "source": rb.Source, "change": by.Change,
				"labels": strings.Join(labels, ", "), "buttons": shown},
		})
		return err
	})
}

// Describe is a button's definition in words: label, tool and arguments.
func Describe(b changes.Button) string {
	s := curly(b.Label) + ", tool " + b.Tool
	if len(b.Args) > 0 {
		s += " with " + ArgsText(b.Args)
	}
	return s
}

// ArgsText is a button's arguments as people read them: "name=a, state=on",
// sorted by name.
func ArgsText(args map[string]string) string {
	parts := make([]string, 0, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		parts = append(parts, k+"="+args[k])
	}
	return strings.Join(parts, ", ")
}
