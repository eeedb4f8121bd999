package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// SkillSwitch is the stored state of one skill's kill switch. Skills are
// defined in code (skills), so a skill with no stored switch is on.
type SkillSwitch struct {
	Skill     string
	Enabled   bool
	Reason    string // why it was last switched, as the on-call engineer typed it (redacted)
	ChangedBy string // the principal who last switched it
	ChangedAt time.Time
}

// SkillEnabled reports whether journeys may be routed to skill: true
// unless someone switched it off.
func SkillEnabled(ctx context.Context, q store.Querier, skill string) (bool, error) {
	sw, err := skillSwitch(ctx, q, skill)
	if err != nil {
		return false, err
	}
	return sw.Enabled, nil
}

// SkillSwitches returns every stored skill switch by skill name; a skill
// missing from the map is on.
func SkillSwitches(ctx context.Context, q store.Querier) (map[string]SkillSwitch, error) {
	all, err := store.Query(ctx, q, scanSkillSwitch, `SELECT skill, enabled, reason, changed_by, changed_at FROM skill_switches`)
	if err != nil {
		return nil, fmt.Errorf("list skill switches: %w", err)
	}
	out := make(map[string]SkillSwitch, len(all))
	for _, sw := range all {
		out[sw.Skill] = sw
	}
	return out, nil
}

// SwitchSkill turns a skill on (enabled true) or off: while it is off no
// new journey is routed to it (the runtime refuses with skill_disabled),
// and journeys already past routing finish. The switch and its audit event
// (skill.enabled or skill.disabled, with the reason) are one transaction;
// pressing the same switch again changes and records nothing, and reports
// changed false. Whether the skill exists is the caller's business: skills
// live in code, not in this table.
func SwitchSkill(ctx context.Context, db *store.DB, actor audit.Actor, skill string, enabled bool, reason string) (changed bool, err error) {
	if skill == "" {
		return false, errors.New("switch skill: no skill named")
	}
	verb := "skill.disabled"
	if enabled {
		verb = "skill.enabled"
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		sw, err := skillSwitch(ctx, tx, skill)
		if err != nil || sw.Enabled == enabled {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO skill_switches (skill, enabled, reason, changed_by, changed_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (skill) DO UPDATE SET enabled = excluded.enabled, reason = excluded.reason,
				changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
			skill, enabled, reason, actor.ID, store.Now())
		if err != nil {
			return fmt.Errorf("switch skill %s: %w", skill, err)
		}
		changed = true
		details := map[string]any{"enabled": enabled}
		if reason != "" {
			details["reason"] = reason
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    verb,
			Subject: audit.Subject{Type: "skill", ID: skill},
			Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

func skillSwitch(ctx context.Context, q store.Querier, skill string) (SkillSwitch, error) {
	sw, err := store.Get(ctx, q, scanSkillSwitch, `SELECT skill, enabled, reason, changed_by, changed_at FROM skill_switches WHERE skill = ?`, skill)
	if errors.Is(err, store.ErrNotFound) {
		return SkillSwitch{Skill: skill, Enabled: true}, nil
	}
	return sw, err
}

func scanSkillSwitch(s scanner) (SkillSwitch, error) {
	var sw SkillSwitch
	var at string
	if err := s.Scan(&sw.Skill, &sw.Enabled, &sw.Reason, &sw.ChangedBy, &at); err != nil {
		return SkillSwitch{}, fmt.Errorf("load skill switch: %w", err)
	}
	sw.ChangedAt, _ = time.Parse(time.RFC3339Nano, at)
	return sw, nil
}
