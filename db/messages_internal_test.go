package db

import (
	"strings"
	"testing"
)

// The by-timestamp statement spells out messageColumns with the m. alias by
// hand (a constant cannot call prefixed); it must stay the same list, in the
// same order, that scanMessages reads.
func TestMessageByTimestampColumns(t *testing.T) {
	if want := "SELECT " + prefixed("m.", messageColumns) + " FROM"; !strings.HasPrefix(messageByTimestampSQL, want) {
		t.Errorf("messageByTimestampSQL does not start with\n%s\n%s", want, messageByTimestampSQL)
	}
}
