package db

import (
	"strings"
	"testing"
)

// messageColumnsM spells out messageColumns with the m. alias by hand (a
// constant cannot call prefixed); it must stay the same list, in the same
// order, that scanMessages reads.
func TestMessageColumnsOfAlias(t *testing.T) {
	if want := prefixed("m.", messageColumns); messageColumnsM != want {
		t.Errorf("messageColumnsM is\n%s\nwant\n%s", messageColumnsM, want)
	}
	for _, q := range []string{messageByTimestampSQL, messagesBySequenceSQL, messagesByTimestampSQL} {
		if !strings.HasPrefix(q, "SELECT "+messageColumnsM+" FROM") {
			t.Errorf("does not select messageColumnsM: %s", q)
		}
	}
}
