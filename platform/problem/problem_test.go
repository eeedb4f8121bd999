package problem

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestKindsMapToStatuses(t *testing.T) {
	for kind, want := range map[Kind]int{
		KindInternal: 500, KindInvalid: 400, KindUnauthenticated: 401, KindExhausted: 402, KindForbidden: 403,
		KindNotFound: 404, KindConflict: 409, KindTooLarge: 413, KindUnprocessable: 422, KindRateLimited: 429, KindUnavailable: 503,
	} {
		if got := kind.Status(); got != want {
			t.Errorf("Kind(%d).Status() = %d, want %d", kind, got, want)
		}
		if got := KindOf(want); got != kind {
			t.Errorf("KindOf(%d) = %d, want %d", want, got, kind)
		}
	}
}

func TestFromFindsTheProblemOrCallsItInternal(t *testing.T) {
	stale := Conflict("stale", "It changed.").Titled("Changed")
	wrapped := fmt.Errorf("decide: %w", stale.Wrap(errors.New("cas lost")))
	p := From(wrapped)
	if p.Code != "stale" || p.Status() != http.StatusConflict || p.Title != "Changed" || p.Message != "It changed." {
		t.Errorf("From(wrapped) = %+v", p)
	}
	if !errors.Is(wrapped, stale) {
		t.Error("a wrapped copy does not match the value it was made from")
	}
	if errors.Is(wrapped, Conflict("other", "x")) {
		t.Error("a problem matches one with another code")
	}
	internal := From(errors.New("disk on fire"))
	if internal.Kind != KindInternal || internal.Status() != 500 || internal.Message == "" || internal.Err == nil {
		t.Errorf("From(plain error) = %+v, want an internal problem keeping the cause", internal)
	}
	if From(nil) != nil {
		t.Error("From(nil) is not nil")
	}
}

func TestDefaultCode(t *testing.T) {
	for status, want := range map[int]string{400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
		405: "method_not_allowed", 413: "too_large", 503: "unavailable", 500: "internal", 502: "internal", 418: "error"} {
		if got := DefaultCode(status); got != want {
			t.Errorf("DefaultCode(%d) = %q, want %q", status, got, want)
		}
	}
}
