package store

import (
	"crypto/rand"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a new ULID: unique, and sorted by creation time.
func NewID() string {
	return ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// Now is the current time in UTC, formatted as stored.
func Now() string { return FormatTime(time.Now()) }

// FormatTime formats t in UTC the way every table stores time.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
