package principals

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

func TestUnknownIDIsNotFound(t *testing.T) {
	db := storetest.Open(t)
	if _, err := ByID(context.Background(), db, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ByID(nope) error = %v, want store.ErrNotFound", err)
	}
}

func TestUpsertKeepsIDAndRefreshesRoles(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	up := func(roles []string) string {
		var id string
		err := db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			id, err = Upsert(ctx, tx, Principal{Issuer: "https://idp", Subject: "u1", Name: "U", Roles: roles, Tenants: []string{"*"}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id1 := up([]string{"approver"})
	id2 := up([]string{"admin"})
	if id1 != id2 {
		t.Fatalf("second login got id %s, want %s", id2, id1)
	}
	p, err := ByID(ctx, db, id1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Roles) != 1 || p.Roles[0] != "admin" || p.Issuer != "https://idp" || p.Subject != "u1" {
		t.Fatalf("ByID = %+v, want roles [admin] for https://idp/u1", p)
	}
}

func TestNamesFallBackToEmailThenSubject(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var ids []string
	for _, p := range []Principal{
		{Issuer: "https://idp", Subject: "s1", Name: "Ann", Email: "ann@example.com"},
		{Issuer: "https://idp", Subject: "s2", Email: "bob@example.com"},
		{Issuer: "https://idp", Subject: "s3"},
	} {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			id, err := Upsert(ctx, tx, p)
			ids = append(ids, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	names, err := NamesOf(ctx, db, append(ids, "cli"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Ann", "bob@example.com", "s3"} {
		if got := names.Of(ids[i]); got != want {
			t.Errorf("name of principal %d = %q, want %q", i, got, want)
		}
	}
	if got := names.Of("cli"); got != "cli" {
		t.Errorf("name of an unknown id = %q, want the id itself", got)
	}
}
