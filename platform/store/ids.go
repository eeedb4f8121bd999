package store

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// ids draws ULIDs monotonically: two made in the same millisecond by this
// process still sort in the order they were made, so "newest first by id"
// holds within a millisecond too.
var ids = struct {
	sync.Mutex
	entropy *ulid.MonotonicEntropy
}{entropy: ulid.Monotonic(rand.Reader, 0)}

// NewID returns a new ULID: unique, and sorted by creation time.
func NewID() string {
	ids.Lock()
	defer ids.Unlock()
	return ulid.MustNew(ulid.Timestamp(time.Now()), ids.entropy).String()
}

// Now is the current time in UTC, formatted as stored.
func Now() string { return FormatTime(time.Now()) }

// FormatTime formats t in UTC the way every table stores time.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
