// Package owners keeps who answers for a tool, a model deployment or a
// tenant: a person's e-mail or an identity-provider group (group:NAME).
// Skills and runbooks name theirs in their files. Changing an owner is a
// governed change (docs/changes.md, kind owner): the console calls Set
// once a second admin approved it.
//
//	o, _ := owners.Get(ctx, q, owners.Tool, "issue_refund")
//	all, _ := owners.Of(ctx, q, owners.Tool) // name → owner, for a list page
//	_ = owners.Set(ctx, db, actor, owners.Tool, "issue_refund", "group:payments")
package owners

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Objects that have an owner column.
const (
	Tool   = "tool"
	Model  = "model"
	Tenant = "tenant"
)

// where is each object's table and key column.
var where = map[string][2]string{
	Tool:   {"tools", "name"},
	Model:  {"model_deployments", "name"},
	Tenant: {"tenants", "slug"},
}

// ErrUnknownObject is an object kind without an owner.
var ErrUnknownObject = problem.Invalid("unknown_object", "Only tools, model deployments and tenants have an owner here.")

// Get is the owner of object key ("" for none), or store.ErrNotFound.
func Get(ctx context.Context, q store.Querier, object, key string) (string, error) {
	w, ok := where[object]
	if !ok {
		return "", ErrUnknownObject
	}
	var owner string
	err := q.QueryRowContext(ctx, `SELECT owner FROM `+w[0]+` WHERE `+w[1]+` = ?`, key).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("owner of %s %s: %w", object, key, err)
	}
	return owner, nil
}

// Of is the owner of every object of a kind that has one, by key: the
// list pages read their owners with this one query (objects without an
// owner are not in the map).
func Of(ctx context.Context, q store.Querier, object string) (map[string]string, error) {
	w, ok := where[object]
	if !ok {
		return nil, ErrUnknownObject
	}
	pairs, err := store.Query(ctx, q, func(row store.Scanner) ([2]string, error) {
		var p [2]string
		err := row.Scan(&p[0], &p[1])
		return p, err
	}, `SELECT `+w[1]+`, owner FROM `+w[0]+` WHERE owner <> ''`)
	if err != nil {
		return nil, fmt.Errorf("owners of %ss: %w", object, err)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, nil
}

// Check validates an owner as typed: an e-mail, group:NAME, or "" for
// none (a field error otherwise).
func Check(owner string) (string, error) {
	o, err := identity.CheckOwner(owner)
	if err != nil {
		return "", &store.ValidationError{Fields: map[string]string{"owner": "Write a person's e-mail or group:NAME (an identity-provider group)."}}
	}
	return o, nil
}

// Set makes owner the owner of object key, with its audit event
// owner.set, in one transaction.
func Set(ctx context.Context, db *store.DB, actor audit.Actor, object, key, owner string) error {
	w, ok := where[object]
	if !ok {
		return ErrUnknownObject
	}
	owner, err := Check(owner)
	if err != nil {
		return err
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		before, err := Get(ctx, tx, object, key)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+w[0]+` SET owner = ? WHERE `+w[1]+` = ?`, owner, key); err != nil {
			return fmt.Errorf("set owner of %s %s: %w", object, key, err)
		}
		tenant := ""
		if object == Tenant {
			tenant = key
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Tenant: tenant, Verb: "owner.set",
			Subject: audit.Subject{Type: object, ID: key}, Details: map[string]any{"before": before, "after": owner}})
		return err
	})
}
