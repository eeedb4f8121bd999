package skills

import (
	"embed"
	"fmt"
)

// The development demo's model-driven skill: its SKILL.md names a model
// and no Go plan exists for it, so a model drives it (docs/skills.md).

//go:embed modeldemo/*/SKILL.md
var modelDemoFiles embed.FS

// ModelDemoName is the name of the demo's model-driven skill, and
// ModelDemoAlias the model alias it names.
const (
	ModelDemoName  = "model_refunds"
	ModelDemoAlias = "demo-agent"
)

// ModelDemo returns the development demo's model-driven skill.
func ModelDemo() (Skill, error) {
	path := "modeldemo/" + ModelDemoName + "/SKILL.md"
	src, err := modelDemoFiles.ReadFile(path)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s (embedded %s): %w", ModelDemoName, path, err)
	}
	s, err := Parse(src)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s (embedded %s): %w", ModelDemoName, path, err)
	}
	s.Source = SourceDevDemo
	bind(&s)
	if err := s.Validate(); err != nil {
		return Skill{}, fmt.Errorf("skill %s (embedded %s): %w", ModelDemoName, path, err)
	}
	return s, nil
}
