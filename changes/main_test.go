package changes

import (
	"testing"

	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestMain shares one PostgreSQL database among the tests (a schema each)
// when WARDEN_TEST_POSTGRES is set; on SQLite it only runs them.
func TestMain(m *testing.M) { storetest.Main(m) }
