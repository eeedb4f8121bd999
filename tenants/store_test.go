package tenants

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

func TestUnknownSlugIsNotFound(t *testing.T) {
	db := storetest.Open(t)
	if _, err := BySlug(context.Background(), db.Read(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("BySlug(nope) error = %v, want store.ErrNotFound", err)
	}
}

func TestCountByScope(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	for _, s := range []string{"acme", "globex", "initech"} {
		if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := Insert(ctx, tx, s, s); return err }); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		scope []string
		want  int64
	}{
		{nil, 3}, {[]string{}, 0}, {[]string{"acme"}, 1}, {[]string{"acme", "initech", "nope"}, 2},
	}
	for _, tt := range tests {
		got, err := Count(ctx, db, tt.scope)
		if err != nil || got != tt.want {
			t.Errorf("Count(%q) = %d, %v; want %d", tt.scope, got, err, tt.want)
		}
	}
}
