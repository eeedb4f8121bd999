package notify_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/notify"
)

// startAlertmanager runs Debian's prometheus-alertmanager on a free
// loopback port with a configuration that routes every alert nowhere,
// and returns its URL. Without the binary the test is skipped, unless CI
// or WARDEN_E2E asks for every peer (.ci/run installs it).
func startAlertmanager(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		bin, err = exec.LookPath("alertmanager")
	}
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("WARDEN_E2E") != "" {
			t.Fatal("prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager; .ci/run does)")
		}
		t.Skip("prometheus-alertmanager is not installed; apt-get install prometheus-alertmanager to run this test")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte("route:\n  receiver: nowhere\nreceivers:\n  - name: nowhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("alertmanager's output:\n%s", out.String())
		}
	})
	base := "http://" + addr
	pollFor(t, "alertmanager ready", 100*time.Millisecond, 20*time.Second, func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

func activeAlerts(t *testing.T, base string) []amAlert {
	t.Helper()
	resp, err := http.Get(base + "/api/v2/alerts?active=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []amAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAlertmanager: Warden's firing alert appears in a real
// Alertmanager's API with Warden's labels and the runbook annotation, and
// leaves the active list when Warden resolves it.
func TestAlertmanager(t *testing.T) {
	base := startAlertmanager(t)
	r := newRig(t)
	ch := r.channel(t, notify.Input{Name: "alertmanager", Kind: notify.Alertmanager, Secret: notify.Secret{URL: base}})
	r.route(t, notify.Route{Event: notify.EventAlert, ChannelID: ch.ID, MinSeverity: "warning"})
	r.setQuiet(t, 0)
	r.start(t, 2)

	fired := time.Now().UTC()
	r.alert(t, "al1", fired, nil)
	var got []amAlert
	waitFor(t, "the alert in Alertmanager", func() bool {
		got = activeAlerts(t, base)
		return len(got) == 1
	})
	a := got[0]
	want := map[string]string{"alertname": "Warden_failure_rate", "severity": "critical", "source": "warden",
		"subject": "refunds", "dedup_key": "warden/failure_rate/refunds"}
	for k, v := range want {
		if a.Labels[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, a.Labels[k], v, a.Labels)
		}
	}
	if a.Annotations["runbook_url"] != "https://warden.example.com/runbooks/tool-provider-outage" ||
		a.Annotations["summary"] != "Failure rate of skill refunds" || !strings.Contains(a.Annotations["description"], "45% (threshold 20%)") {
		t.Errorf("annotations = %v", a.Annotations)
	}
	if a.Status.State != "active" {
		t.Errorf("state = %q, want active", a.Status.State)
	}

	resolved := time.Now().UTC()
	r.alert(t, "al1", fired, &resolved)
	waitFor(t, "the alert to leave the active list", func() bool { return len(activeAlerts(t, base)) == 0 })
	// The delivery is recorded once Alertmanager has answered.
	waitFor(t, "the firing and the resolution recorded as delivered", func() bool { return r.deliveryStatuses(t)["delivered"] == 2 })
}
