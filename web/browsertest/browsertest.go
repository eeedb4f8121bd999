// Package browsertest starts the headless Chromium that Warden's browser
// tests drive with chromedp (Debian's chromium package). Without chromium
// on PATH a browser test skips, unless WARDEN_E2E=1 (as in CI) makes a
// missing browser a failure. Only tests import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds chromium on PATH, or skips (fails under WARDEN_E2E=1).
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("WARDEN_E2E") == "1" {
		t.Fatal("WARDEN_E2E=1 but no chromium on PATH: apt-get install -y chromium")
	}
	t.Skip("browser tests skipped: no chromium on PATH (apt-get install -y chromium, or set WARDEN_E2E=1 to require them)")
	return ""
}

// Context starts a headless Chromium of the test's own (a fresh profile)
// and returns a chromedp context on it, ended at the test's cleanup and
// after 90 s at most. extra adds allocator options (a window size).
func Context(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	opts = append(opts, extra...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}
