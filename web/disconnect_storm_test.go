package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

// startReplicas runs n Warden servers on one database and one data
// directory, as replicas behind a load balancer: on PostgreSQL two, each
// with its own runtime, job workers and connection pool; on SQLite one
// (one process serves its file). It returns them and a key of the demo
// tenant with rate limits no storm reaches.
func startReplicas(t *testing.T, env map[string]string) ([]*instance, string) {
	t.Helper()
	vals := map[string]string{"WARDEN_DATA_DIR": t.TempDir()}
	if storetest.Postgres() {
		vals["WARDEN_DATABASE_URL"] = storetest.URL(t)
	}
	for k, v := range env {
		vals[k] = v
	}
	n := 1
	if storetest.Postgres() {
		n = 2
	}
	var ins []*instance
	for range n {
		ins = append(ins, startWardenDemo(t, vals))
	}
	ctx := context.Background()
	db := ins[0].DB
	acme, err := tenants.BySlug(ctx, db.Read(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var secret string
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, s, err := keys.Create(ctx, tx, ins[0].Agent.Journeys.Sealer(), keys.NewSpec{TenantID: acme.ID, Name: "storm bot",
			Scopes: []string{"skill:order_status", "tool:lookup_order"}, RatePerMin: 600000, Burst: 10000, CreatedBy: "test"})
		secret = s.Key
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ins, secret
}

// stuck is what a disconnect left behind: journeys still running and the
// micro-units still reserved on budgets.
func stuck(t *testing.T, db *store.DB) (running int, reserved int64) {
	t.Helper()
	if err := db.Read().QueryRow(`SELECT COUNT(*) FROM journeys WHERE status = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if err := db.Read().QueryRow(`SELECT COALESCE(SUM(reserved_micros), 0) FROM budgets`).Scan(&reserved); err != nil {
		t.Fatal(err)
	}
	return running, reserved
}

// TestDisconnectStormLeavesNothingReserved: clients that hang up at every
// moment of a journey (HTTP timeouts of 5 to 400 ms against real servers,
// on both replicas of one PostgreSQL database, or the one SQLite server)
// leave no journey running and nothing reserved, while the replicas stay
// up: each disconnect cancels its journey and releases its reservation.
// The journeys the storm cancelled read "cancelled", never a 500.
func TestDisconnectStormLeavesNothingReserved(t *testing.T) {
	// Nothing is shed: every request reaches its journey, and a 503 the
	// shedder would log is not what this test is about.
	ins, secret := startReplicas(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "1000"})
	for _, in := range ins {
		in.waitReady(t)
	}
	db := ins[0].DB
	const waves, perWave = 4, 100
	var wg sync.WaitGroup
	for w := range waves {
		for i := range perWave {
			in := ins[i%len(ins)]
			timeout := time.Duration(5+(i*37+w*13)%400) * time.Millisecond
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: timeout}
				req, _ := http.NewRequest(http.MethodPost, in.URL+"/v1/journeys",
					strings.NewReader(fmt.Sprintf(`{"input": "Where is my order ORD-1003? (%d/%d)"}`, w, i)))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("Content-Type", "application/json")
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
	}
	// The servers finish what the clients left; no sweep is needed (the
	// periodic one would wait 15 minutes for a live replica's journeys).
	var running int
	var reserved int64
	wait.ForEvery(40*time.Second, 100*time.Millisecond, func() bool {
		running, reserved = stuck(t, db)
		return running == 0 && reserved == 0
	})
	if running != 0 || reserved != 0 {
		t.Errorf("after the storm, with every replica up: %d journeys running and %d micro-units reserved, want 0 and 0", running, reserved)
	}
	var total, cancelled, internal int
	db.Read().QueryRow(`SELECT COUNT(*) FROM journeys`).Scan(&total)
	db.Read().QueryRow(`SELECT COUNT(*) FROM journeys WHERE status = 'cancelled'`).Scan(&cancelled)
	db.Read().QueryRow(`SELECT COUNT(*) FROM journeys WHERE error_code = 'internal'`).Scan(&internal)
	t.Logf("%d journeys admitted, %d cancelled, %d internal", total, cancelled, internal)
	if internal != 0 {
		t.Errorf("%d journeys ended failed/internal; a client that went away ends its journey cancelled", internal)
	}
	for _, in := range ins {
		if logs := in.Logs.String(); strings.Contains(logs, "level=ERROR") {
			t.Errorf("a disconnect was logged as an error:\n%s", grepLines(logs, "level=ERROR"))
		}
	}
}

// grepLines is the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
