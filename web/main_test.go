package web

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestMain shares one PostgreSQL database among the tests (a schema each)
// when WARDEN_TEST_POSTGRES is set; on SQLite it only runs them. A journey
// whose end cannot be written (the storage tests fail writes for good)
// gives up after 2 s instead of 10: what the tests assert is the answer
// after giving up, not how long the retrying lasts.
func TestMain(m *testing.M) {
	journeys.EndingTimeout = 2 * time.Second
	storetest.Main(m)
}
