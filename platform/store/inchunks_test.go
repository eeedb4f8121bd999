package store

import (
	"strings"
	"testing"
)

func TestInChunks(t *testing.T) {
	ids := make([]string, 1001)
	for i := range ids {
		ids[i] = string(rune('a' + i%26))
	}
	var sizes []int
	if err := InChunks(ids, func(in string, args []any) error {
		if strings.Count(in, "?") != len(args) {
			t.Errorf("%d placeholders for %d arguments", strings.Count(in, "?"), len(args))
		}
		sizes = append(sizes, len(args))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 || sizes[0] != 500 || sizes[1] != 500 || sizes[2] != 1 {
		t.Errorf("chunks %v, want [500 500 1]", sizes)
	}
	called := false
	_ = InChunks(nil, func(string, []any) error { called = true; return nil })
	if called {
		t.Error("called for no ids")
	}
}
