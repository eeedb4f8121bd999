package views

import "github.com/wardenhq/warden/audit"

// EventSentence is the sentence the audit page shows for an event, for the
// sentence column of an export (handlers.AuditSentences).
func EventSentence(e audit.Event, n EventNames) string { return eventSentence(e, n) }

// recordedActor is how an event names the person who caused it, as it was
// recorded when they acted: "Alice Approver <alice@example.com>", the one
// of the two it holds, or "" for an event that records neither (another
// kind of actor, or an event older than Warden's recording of them).
func recordedActor(a audit.Actor) string {
	switch {
	case a.Name != "" && a.Email != "":
		return a.Name + " <" + a.Email + ">"
	case a.Name != "":
		return a.Name
	}
	return a.Email
}

// eventDetailFields are the details the audit page lists under an
// event's facts: all but the recorded actor, which the Actor line shows.
func eventDetailFields(d map[string]any) []Field {
	out := detailFields(d)
	for i, f := range out {
		if f.Label == audit.ActorDetailsKey {
			return append(out[:i:i], out[i+1:]...)
		}
	}
	return out
}
