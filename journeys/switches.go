package journeys

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/skills"
)

// CodeSkillDisabled refuses a journey whose skill was switched off: the
// request was routed (or named) to it, and it does not run (HTTP 422).
const CodeSkillDisabled = "skill_disabled"

// SwitchTool turns a tool on or off for every tenant (catalog.Switch):
// the next call of a tool switched off is refused with 403 tool_disabled,
// and an approved action waiting to run fails with the reason. The reason
// goes into the permanent audit chain, so it is redacted first.
func (s *Service) SwitchTool(ctx context.Context, actor audit.Actor, name string, enabled bool, reason string) (bool, error) {
	return catalog.Switch(ctx, s.o.DB, actor, name, enabled, s.o.Redactor.String(reason))
}

// SwitchSkill turns a skill on or off (catalog.SwitchSkill). A skill this
// runtime does not know is store.ErrNotFound.
func (s *Service) SwitchSkill(ctx context.Context, actor audit.Actor, name string, enabled bool, reason string) (bool, error) {
	if _, ok := s.o.Router.Skill(name); !ok {
		return false, fmt.Errorf("skill %s: %w", name, store.ErrNotFound)
	}
	return catalog.SwitchSkill(ctx, s.o.DB, actor, name, enabled, s.o.Redactor.String(reason))
}

// checkSkillOn refuses a routed journey whose skill is switched off. It
// is the one place the skill switch is enforced: a switched-off skill is
// never replaced by the next-best match (the runner-up was judged a worse
// fit, and doing something the caller did not ask for is not a safe way
// to degrade), so the request is refused with 422 skill_disabled, whether
// it was routed by its text or named the skill. Journeys already past
// routing are not affected and finish.
func (r *run) checkSkillOn(ctx context.Context) error {
	s := r.s
	on, err := catalog.SkillEnabled(ctx, s.o.DB.Read(), r.skill.Name)
	if err != nil {
		return Refuse(CodeInternal, "The skill switches cannot be read.", err)
	}
	if on {
		return nil
	}
	reason := "skill " + r.skill.Name + " is switched off"
	r.record(ctx, Step{Kind: "route", Status: "refused", Result: fmt.Sprintf(`{"skill":%s}`, strconv.Quote(r.skill.Name)), Error: reason})
	s.auditViolation(ctx, r, "", CodeSkillDisabled, reason)
	return Refuse(CodeSkillDisabled, fmt.Sprintf("Skill %q is switched off; nothing was done. Try again later.", r.skill.Name), nil)
}

// Skills describes the skills journeys can be routed to, in the router's
// order (the Kill switches page lists them).
func (s *Service) Skills() []skills.Spec {
	var out []skills.Spec
	for _, name := range s.o.Router.Names() {
		sk, _ := s.o.Router.Skill(name)
		out = append(out, sk.Spec())
	}
	return out
}
