package live_test

import (
	"testing"

	"mirrorql/tests/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }
