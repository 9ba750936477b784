package restdiff

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"

	"mirrorql/rest"
)

// The names of the decisions a recorded case may cite: the rows of
// docs/reference/DECISIONS.md, and its paragraph on rest-java's route.
const (
	DecisionSequenceZero     = "DECISIONS 1"
	DecisionNoSuchTopic      = "DECISIONS 2"
	DecisionEncodingRepeated = "DECISIONS 3"
	DecisionEncodingOp       = "DECISIONS 4"
	DecisionTimestampRange   = "DECISIONS 5"
	DecisionNextAdvances     = "DECISIONS 7"
	DecisionTimestampPath    = "DECISIONS 8"
	DecisionUpstream5xx      = "DECISIONS 10"
	DecisionLookupNe         = "DECISIONS 11"
	DecisionRestJava         = "DECISIONS rest-java"
)

// Decide names the decision under which mirrorql answers c otherwise than
// the mirror node does, or "" when none applies: the difference is then a
// fault of ours. A decision is named only when the request holds what the
// decision is about.
func Decide(c *Case) string {
	ours := c.Ours
	if ours == nil {
		return ""
	}
	target := c.Target
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target = target[:i]
	}
	path, rawQuery, _ := strings.Cut(target, "?")
	route, routed := rest.Match(path)
	q, qerr := rest.ParseQuery(rawQuery)
	values := func(key string) []string {
		if qerr != nil {
			return nil
		}
		var out []string
		for _, v := range q.Values[key] {
			out = append(out, v.Raw)
		}
		return out
	}
	param := func(i int) string {
		segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
		if i >= len(segs) {
			return ""
		}
		d, err := url.PathUnescape(segs[i])
		if err != nil {
			return segs[i]
		}
		return d
	}
	name := ""
	if routed {
		name = route.Name
	}
	switch {
	case name == "topic":
		return DecisionRestJava
	case name == "topicMessages" && c.Node.Status == http.StatusInternalServerError && len(values("encoding")) > 1:
		return DecisionEncodingRepeated
	case name == "topicMessages" && hasOperand(values("timestamp"), overflows), name == "messageByTimestamp" && overflows(param(5)):
		return DecisionTimestampRange
	case c.Node.Status >= 500 && ours.Status >= 400 && ours.Status < 500 && ours.JSON != nil:
		return DecisionUpstream5xx
	case name == "topicMessages" && c.Node.Status == http.StatusBadRequest && ours.Status == http.StatusOK &&
		(hasOperator(values("sequencenumber"), "ne") || hasOperator(values("timestamp"), "ne")) &&
		bytes.Contains(c.Node.JSON, []byte("Not equal (ne) operator is not supported")):
		return DecisionLookupNe
	case name == "topicMessage" && strings.Contains(param(6), "."):
		return DecisionTimestampPath
	case name == "topicMessage" && isZero(param(6)), name == "topicMessages" && hasOperand(values("sequencenumber"), isZero):
		return DecisionSequenceZero
	case name == "topicMessages" && anyHasOperator(values("encoding")):
		return DecisionEncodingOp
	case name == "topicMessages" && c.Node.Status == http.StatusOK && ours.Status == http.StatusNotFound && emptyPage(c.Node.JSON) &&
		bytes.Contains(ours.JSON, []byte("No such topic id")):
		return DecisionNoSuchTopic
	case (name == "topicMessages" && hasUnranged(values("timestamp"))) || (name == "schedules" && hasUnranged(values("schedule.id"))):
		if c.Node.Status == http.StatusOK && ours.Status == http.StatusOK && c.Node.Link != ours.Link {
			return DecisionNextAdvances
		}
	}
	return ""
}

// hasOperand reports whether one of the values' operands satisfies f.
func hasOperand(values []string, f func(string) bool) bool {
	for _, v := range values {
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			v = v[i+1:]
		}
		if f(v) {
			return true
		}
	}
	return false
}

func hasOperator(values []string, op string) bool {
	for _, v := range values {
		if o, _, found := strings.Cut(v, ":"); found && strings.EqualFold(o, op) {
			return true
		}
	}
	return false
}

func anyHasOperator(values []string) bool {
	for _, v := range values {
		if strings.Contains(v, ":") {
			return true
		}
	}
	return false
}

func isZero(s string) bool { return s != "" && strings.Trim(s, "0") == "" }

// overflows: a timestamp whose seconds are past what int64 nanoseconds hold.
func overflows(s string) bool {
	sec, _, _ := strings.Cut(s, ".")
	if sec == "" || strings.Trim(sec, "0123456789") != "" {
		return false
	}
	sec = strings.TrimLeft(sec, "0")
	return len(sec) > 10 || (len(sec) == 10 && sec > "9223372036")
}

// hasUnranged: a paging key's value without a range operator (plain, eq or ne).
func hasUnranged(values []string) bool {
	for _, v := range values {
		op, _, found := strings.Cut(v, ":")
		if !found || strings.EqualFold(op, "eq") || strings.EqualFold(op, "ne") {
			return true
		}
	}
	return false
}

func emptyPage(body []byte) bool {
	return bytes.HasPrefix(body, []byte(`{"messages":[]`))
}
