package releases

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
)

const surfacesNoRouting = `"model":"m","prompt":"sha256:p","tools":"sha256:t","approval":"sha256:a","skills":"sha256:s"`

// A bundle file may carry contents: an omitted identifier becomes the
// content's hash, a wrong one is refused, and malformed routing or skill
// contents and contents of unknown surfaces are refused with the reason.
func TestParseContents(t *testing.T) {
	b, c, err := Parse([]byte(`{` + surfacesNoRouting + `,"contents":{"routing":{"threshold":0.5,"router":"keyword"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ContentID(RoutingPolicy{Router: "keyword", Threshold: 0.5})
	if b.Routing != want || string(c["routing"]) != `{"router":"keyword","threshold":0.5}` {
		t.Errorf("routing = %s with content %s; want %s and the canonical content", b.Routing, c["routing"], want)
	}
	for name, tc := range map[string]struct{ raw, field, says string }{
		"wrong id":        {`{` + surfacesNoRouting + `,"routing":"sha256:r","contents":{"routing":{"router":"keyword","threshold":0.5}}}`, "routing", "not the hash"},
		"threshold > 1":   {`{` + surfacesNoRouting + `,"contents":{"routing":{"router":"keyword","threshold":2}}}`, "routing", "threshold"},
		"threshold 0":     {`{` + surfacesNoRouting + `,"contents":{"routing":{"router":"keyword","threshold":0}}}`, "routing", "threshold"},
		"other router":    {`{` + surfacesNoRouting + `,"contents":{"routing":{"router":"llm","threshold":0.5}}}`, "routing", "keyword"},
		"extra field":     {`{` + surfacesNoRouting + `,"contents":{"routing":{"router":"keyword","threshold":0.5,"x":1}}}`, "routing", "routing policy"},
		"empty skill set": {`{"model":"m","prompt":"p","tools":"t","routing":"r","approval":"a","contents":{"skills":[]}}`, "skills", "one or more"},
		"skill twice":     {`{"model":"m","prompt":"p","tools":"t","routing":"r","approval":"a","contents":{"skills":["a","a"]}}`, "skills", "twice"},
		"model content":   {`{"prompt":"p","tools":"t","routing":"r","approval":"a","skills":"s","contents":{"model":"gpt"}}`, "model", "no content"},
		"empty prompt":    {`{"model":"m","tools":"t","routing":"r","approval":"a","skills":"s","contents":{"prompt":" "}}`, "prompt", "non-empty"},
	} {
		_, _, err := Parse([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error()+fieldsOf(err)[tc.field], tc.says) {
			t.Errorf("%s: Parse = %v (fields %v), want the %s field to say %q", name, err, fieldsOf(err), tc.field, tc.says)
		}
	}
}

// Publishing keeps contents, and the behaviour of a release is read from
// them; a release without contents runs as built in.
func TestPublishedContentsDecideBehaviour(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	contents, err := ContentsOf(map[string]any{
		"prompt":  "Be brief.",
		"routing": RoutingPolicy{Router: "keyword", Threshold: 0.6},
		"skills":  []string{"refunds", "order_status"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := sample
	b.Prompt, _ = ContentID(contents["prompt"])
	b.Routing, _ = ContentID(contents["routing"])
	b.Skills, _ = ContentID(contents["skills"])
	d, _, err := Publish(ctx, db, carol, b, contents, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadBehaviour(ctx, db.Read(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got.Threshold != 0.6 || got.Prompt != "Be brief." || !got.Allows("refunds") || got.Allows("customer_email") {
		t.Errorf("behaviour = %+v", got)
	}
	plain, _, _ := Publish(ctx, db, carol, sample, nil, "")
	if got, err := LoadBehaviour(ctx, db.Read(), plain); err != nil || got.Threshold != 0 || !got.Allows("anything") {
		t.Errorf("behaviour without contents = %+v, %v; want the built-in", got, err)
	}
	// Contents that do not match the bundle's identifiers are refused.
	if _, _, err := Publish(ctx, db, carol, sample, contents, ""); err == nil {
		t.Error("contents with other hashes than the bundle names were published")
	}
	if txt, _ := ContentText(ctx, db.Read(), b.Routing); !strings.Contains(txt, `"threshold": 0.6`) {
		t.Errorf("ContentText(routing) = %q", txt)
	}
}

func fieldsOf(err error) map[string]string {
	var v *store.ValidationError
	if errors.As(err, &v) {
		return v.Fields
	}
	return map[string]string{}
}

// The skill set is either the names of the skills (as releases published
// before skills were SKILL.md files wrote it) or their names with the
// hashes of their files; both decide which skills a release routes to.
func TestSkillSetOfNamesOrHashedEntries(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for name, tc := range map[string]struct {
		raw  string
		want []string
		says string
	}{
		"names":         {raw: `["refunds","order_status"]`, want: []string{"refunds", "order_status"}},
		"entries":       {raw: `[{"name":"refunds","hash":"` + h + `"},{"name":"order_status","hash":"` + h + `"}]`, want: []string{"refunds", "order_status"}},
		"short hash":    {raw: `[{"name":"refunds","hash":"abc"}]`, says: "SHA-256"},
		"no hash":       {raw: `[{"name":"refunds"}]`, says: "SHA-256"},
		"unknown field": {raw: `[{"name":"refunds","hash":"` + h + `","x":1}]`, says: "JSON array"},
		"entry twice":   {raw: `[{"name":"refunds","hash":"` + h + `"},{"name":"refunds","hash":"` + h + `"}]`, says: "twice"},
		"empty entries": {raw: `[]`, says: "one or more"},
		"neither":       {raw: `{"refunds":true}`, says: "JSON array"},
	} {
		got, err := parseSkills([]byte(tc.raw))
		if tc.says != "" {
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: parseSkills = %v, %v; want an error saying %q", name, got, err, tc.says)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: parseSkills = %v, %v; want %v", name, got, err, tc.want)
		}
	}
}
