package audit

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// Trail returns every event about one subject, oldest first: the story of
// an action (requested, decided, executed) as the chain tells it. It is
// meant for subjects with a short story, such as an action; a long one,
// such as a tenant's, is a list to page through with Page.
//
// Like List, it reads what is stored and does not verify it.
func Trail(ctx context.Context, db Querier, subjectType, subjectID string) ([]Event, error) {
	if subjectType == "" || subjectID == "" {
		return nil, fmt.Errorf("audit trail: want a subject type and id, got %q %q", subjectType, subjectID)
	}
	cond, args := Query{SubjectType: subjectType, SubjectID: subjectID}.Where()
	out, err := store.Query(ctx, db, scanEvent, selectEvents+" WHERE "+cond+" ORDER BY seq", args...)
	if err != nil {
		return nil, fmt.Errorf("audit trail of %s %s: %w", subjectType, subjectID, err)
	}
	return out, nil
}
