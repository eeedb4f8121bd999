package alerts

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/routelabels"
)

// The route accuracy alert fires once the last N labelled journeys are
// routed right less often than the threshold, links to the runbook that
// rolls the release back, stays quiet with fewer than N labels, and
// resolves when relabelling lifts accuracy back.
func TestRouteAccuracyAlert(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "p-ada"}
	if _, err := routelabels.SetSettings(ctx, r.db, admin, routelabels.Settings{SamplePercent: 5, AlertPercent: 80, AlertLastN: 5}, clock); err != nil {
		t.Fatal(err)
	}
	who := routelabels.Who{Actor: admin, Name: "Ada"}
	label := func(i int, correct bool) {
		t.Helper()
		id := fmt.Sprintf("j%05d", i)
		v := routelabels.Verdict{Correct: correct}
		if !correct {
			v.Expected = "refunds"
		}
		j := routelabels.Journey{ID: id, TenantID: r.tenant.ID, TenantSlug: "acme", Agent: "support-agent", Env: "production",
			Release: "sha256:test", Routed: "order_status", At: clock.Add(-time.Hour)}
		if _, err := routelabels.Set(ctx, r.db, who, j, v); err != nil {
			t.Fatal(err)
		}
	}
	r.journeys(t, "order_status", "completed", 5, time.Second, time.Hour)
	for i := 1; i <= 4; i++ {
		label(i, i > 2) // 2 of 4 right: below 80 %, but fewer than 5 labels
	}
	if rep := r.evaluate(t, clock); len(rep.Fired) != 0 {
		t.Fatalf("4 labels of 5 needed fired %v", describe(rep.Fired))
	}
	label(5, true) // 3 of 5 = 60 %
	rep := r.evaluate(t, clock)
	if got, want := describe(rep.Fired), []string{"route_accuracy support-agent/production 60/80 bad-release-rollback"}; !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if w := rep.Fired[0].What(); w != "Route accuracy of support-agent/production (people's labels)" {
		t.Errorf("What = %q", w)
	}
	// 4 of 5 = 80 %: not below the threshold, so it resolves.
	label(1, true)
	if rep := r.evaluate(t, clock); len(rep.Resolved) != 1 || rep.Resolved[0].Kind != RouteAccuracy {
		t.Errorf("after relabelling to 80%%: resolved %v, want the route accuracy alert", describe(rep.Resolved))
	}
	if !slices.Contains(r.alertEvents(t), "alert.fired route_accuracy support-agent/production 60/80 by system") {
		t.Errorf("alert events %v lack the firing", r.alertEvents(t))
	}
}
