package v1

import (
	"strings"
	"testing"

	"mirrorql/db/internal/driver"
	"mirrorql/model"
)

// MessageColumnsM spells out MessageColumns with the m. alias by hand (a
// constant cannot call prefixed); it must stay the same list, in the same
// order, that ScanMessages reads.
func TestMessageColumnsOfAlias(t *testing.T) {
	if want := driver.Prefixed("m.", driver.MessageColumns); driver.MessageColumnsM != want {
		t.Errorf("driver.MessageColumnsM is\n%s\nwant\n%s", driver.MessageColumnsM, want)
	}
	for _, q := range []string{messageByTimestampSQL, messagesBySequenceSQL, messagesByTimestampSQL} {
		if !strings.HasPrefix(q, "SELECT "+driver.MessageColumnsM+" FROM") {
			t.Errorf("does not select driver.MessageColumnsM: %s", q)
		}
	}
}

// TestPageStatementsAgree: the page of many topics is the page of one topic
// run per topic, the same text from the topic on.
func TestPageStatementsAgree(t *testing.T) {
	for _, desc := range []bool{false, true} {
		o := "asc"
		if desc {
			o = "desc"
		}
		one := [3]string{}
		many := [3]string{}
		one[0], one[1], one[2] = pageStatements(false, orderOf(desc))
		many[0], many[1], many[2] = pageStatements(true, orderOf(desc))
		for i := range one {
			inner, ok := strings.CutPrefix(one[i], pageOfTopic)
			if !ok {
				t.Fatalf("%s %d: %s does not start with the page of one topic", o, i, one[i])
			}
			want := pageOfTopics + inner + ") AS m ORDER BY m.topic_id, m."
			if !strings.HasPrefix(many[i], want) {
				t.Errorf("%s %d: the page of many topics is\n%s\nwant it to start with\n%s", o, i, many[i], want)
			}
			dir := " ASC"
			if desc {
				dir = " DESC"
			}
			if !strings.HasSuffix(one[i], dir+" LIMIT $5") && !strings.HasSuffix(one[i], dir+" LIMIT $8") {
				t.Errorf("%s %d: %s is not ordered %s", o, i, one[i], dir)
			}
			if !strings.HasSuffix(many[i], dir) {
				t.Errorf("%s %d: %s is not ordered %s", o, i, many[i], dir)
			}
		}
	}
}

func orderOf(desc bool) model.Order {
	if desc {
		return model.Desc
	}
	return model.Asc
}
