package catalog

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/audit"
)

func TestSwitchSkill(t *testing.T) {
	const reason = "INC-12: refunds issued twice"
	tests := []struct {
		name        string
		offFirst    bool // switch refunds off before
		enable      bool
		reason      string
		wantChanged bool
		wantVerb    string
		wantDetails string
		wantEnabled bool // refunds afterwards
		wantReason  string
	}{
		{name: "off", reason: reason, wantChanged: true, wantVerb: "skill.disabled",
			wantDetails: `{"enabled":false,"reason":"` + reason + `"}`, wantReason: reason},
		{name: "off again", offFirst: true, reason: "pressed twice", wantReason: "first press"},
		{name: "on", offFirst: true, enable: true, wantChanged: true, wantVerb: "skill.enabled",
			wantDetails: `{"enabled":true}`, wantEnabled: true},
		{name: "on already", enable: true, wantEnabled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := setup(t)
			if tt.offFirst {
				if _, err := SwitchSkill(ctx, db, admin, "refunds", false, "first press"); err != nil {
					t.Fatal(err)
				}
			}
			before := countEvents(t, db)
			changed, err := SwitchSkill(ctx, db, admin, "refunds", tt.enable, tt.reason)
			if err != nil || changed != tt.wantChanged {
				t.Errorf("SwitchSkill(refunds, %v) = %v, %v; want %v, nil", tt.enable, changed, err, tt.wantChanged)
			}
			checkEventAbout(t, newEvents(t, db, before), tt.wantVerb, audit.Subject{Type: "skill", ID: "refunds"}, tt.wantDetails)
			if on, err := SkillEnabled(ctx, db.Read(), "refunds"); err != nil || on != tt.wantEnabled {
				t.Errorf("SkillEnabled(refunds) = %v, %v; want %v", on, err, tt.wantEnabled)
			}
			all, err := SkillSwitches(ctx, db.Read())
			if err != nil {
				t.Fatal(err)
			}
			sw, stored := all["refunds"]
			if !stored {
				sw.Enabled = true // a skill missing from the map is on
			}
			if stored != (tt.offFirst || tt.wantChanged) || sw.Enabled != tt.wantEnabled || sw.Reason != tt.wantReason {
				t.Errorf("SkillSwitches()[refunds] = %+v (stored %v); want enabled %v, reason %q", sw, stored, tt.wantEnabled, tt.wantReason)
			}
			if stored && (sw.ChangedBy != admin.ID || sw.ChangedAt.IsZero()) {
				t.Errorf("refunds switched by %q at %v, want %q at a time", sw.ChangedBy, sw.ChangedAt, admin.ID)
			}
			if on, err := SkillEnabled(ctx, db.Read(), "order_status"); err != nil || !on {
				t.Errorf("SkillEnabled(order_status) = %v, %v; want true: a skill never switched is on", on, err)
			}
		})
	}
}
