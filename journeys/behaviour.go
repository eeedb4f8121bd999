package journeys

import (
	"context"
	"errors"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/skills"
)

// behaviour is what the release digest changes in how journeys run
// (releases.LoadBehaviour): its routing threshold and skill set. Bundles
// and their contents are immutable, so it is read once per digest and
// kept. A digest Warden never stored (the fixed default of a runtime
// without releases) runs as built in.
func (s *Service) behaviour(ctx context.Context, digest string) (releases.Behaviour, error) {
	if v, ok := s.behaviours.Load(digest); ok {
		return v.(releases.Behaviour), nil
	}
	b, err := releases.LoadBehaviour(ctx, s.o.DB.Read(), digest)
	var p *problem.Error
	if errors.As(err, &p) && p.Kind == problem.KindNotFound {
		b, err = releases.Behaviour{}, nil
	}
	if err != nil {
		return releases.Behaviour{}, err
	}
	s.behaviours.Store(digest, b)
	return b, nil
}

// route picks the skill for a journey's redacted text under the release
// it runs under: the release's threshold and skill set decide.
func (s *Service) route(ctx context.Context, digest, text, hint string) (skills.Skill, float64, error) {
	b, err := s.behaviour(ctx, digest)
	if err != nil {
		return skills.Skill{}, 0, err
	}
	return s.o.Router.RouteWith(withoutPII(text), hint, skills.Policy{Threshold: b.Threshold, Allow: b.Allows})
}

// route picks the journey's skill: the router model's choice when one is
// configured and it names a skill the release allows (an explicit skill
// hint always wins), the lexical router's otherwise.
func (r *run) route(ctx context.Context, text, hint string) (skills.Skill, float64, error) {
	s := r.s
	if hint == "" && s.o.RouterModel != "" {
		b, err := s.behaviour(ctx, r.j.Release)
		if err != nil {
			return skills.Skill{}, 0, err
		}
		if sk, ok := r.routeByModel(ctx, text, b.Allows); ok {
			r.routedBy = "model:" + s.o.RouterModel
			return sk, 1, nil
		}
	}
	return s.route(ctx, r.j.Release, text, hint)
}
