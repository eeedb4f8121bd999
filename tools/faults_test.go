package tools

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func okProvider() *scripted {
	return &scripted{fn: func(context.Context, int64) (Result, error) { return Result{Output: []byte(`{}`)}, nil }}
}

// Each fault mode behaves as documented, and a seed repeats a flaky run.
func TestInjectorModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := Tool{Name: "lookup_order"}
		run := func(seed uint64) []bool {
			i := NewInjector(seed)
			i.Set("", Fault{Mode: FaultFlaky, Rate: 0.3})
			w := i.Wrap(okProvider())
			var out []bool
			for range 200 {
				_, err := w.Execute(t.Context(), tool, callOf("lookup_order"))
				out = append(out, err != nil)
			}
			return out
		}
		a, b := run(7), run(7)
		fails := 0
		for k := range a {
			if a[k] != b[k] {
				t.Fatal("the same seed gave another flaky sequence")
			}
			if a[k] {
				fails++
			}
		}
		if fails < 40 || fails > 80 {
			t.Errorf("flaky at 30%% failed %d of 200 calls", fails)
		}

		i := NewInjector(1)
		i.Set("lookup_order", Fault{Mode: FaultDown})
		p := okProvider()
		if _, err := i.Wrap(p).Execute(t.Context(), tool, callOf("lookup_order")); !IsTransient(err) || p.calls.Load() != 0 {
			t.Errorf("down: %v, provider called %d times; want Transient without a call", err, p.calls.Load())
		}
		if _, err := i.Wrap(p).Execute(t.Context(), Tool{Name: "issue_refund"}, callOf("issue_refund")); err != nil {
			t.Errorf("a fault on one tool hit another: %v", err)
		}

		i.Set("lookup_order", Fault{Mode: FaultHang})
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		start := time.Now()
		if _, err := i.Wrap(p).Execute(ctx, tool, callOf("lookup_order")); !IsTransient(err) || time.Since(start) != time.Hour {
			t.Errorf("hang: %v after %v; want Transient when the context ends (1h)", err, time.Since(start))
		}

		i.Set("lookup_order", Fault{Mode: FaultSlow, Latency: time.Second})
		start = time.Now()
		if _, err := i.Wrap(p).Execute(t.Context(), tool, callOf("lookup_order")); err != nil || time.Since(start) < 500*time.Millisecond || time.Since(start) > 1500*time.Millisecond {
			t.Errorf("slow: %v after %v; want success after 0.5–1.5 s", err, time.Since(start))
		}
		i.Clear()
		if _, err := i.Wrap(p).Execute(t.Context(), tool, callOf("lookup_order")); err != nil {
			t.Errorf("after Clear: %v", err)
		}
	})
}
