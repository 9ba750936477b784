package rest

import (
	"strings"

	"mirrorql/model"
)

// nextLink builds links.next (docs/reference/behavior.md §2.5, §6.4, docs/reference/DECISIONS.md #7): the
// request's own query with the paging key's values in the direction of next
// (the page's app.Page.Next, gt or lt the last row's key) replaced by next.
// bound parses one of the key's values to the integer the empty-range check
// compares.
func nextLink(path string, q *Query, key string, next model.Condition[string], bound func(string) (int64, bool)) *string {
	opPrefix, last := string(next.Op), next.Value
	link := &Query{Keys: make([]string, 0, len(q.Keys)+1), Values: make(map[string][]QueryValue, len(q.Values)+1)}
	for _, k := range q.Keys {
		if k != key {
			link.Keys = append(link.Keys, k)
			link.Values[k] = q.Values[k]
		}
	}
	old := q.Values[key]
	kept := make([]QueryValue, 0, len(old)+1)
	for _, v := range old {
		// the mirror node's unanchored /gt[e]?:/ (or /lt[e]?:/)
		if !strings.Contains(v.Raw, opPrefix+":") && !strings.Contains(v.Raw, opPrefix+"e:") {
			kept = append(kept, v)
		}
	}
	kept = append(kept, QueryValue{Raw: opPrefix + ":" + last})
	if len(old) > 1 || len(kept) > 1 {
		// the key keeps its place; a single value that was replaced moves to the end
		for i, k := range q.Keys {
			if k == key {
				link.Keys = append(link.Keys[:i], append([]string{key}, link.Keys[i:]...)...)
				break
			}
		}
	} else {
		link.Keys = append(link.Keys, key)
	}
	link.Values[key] = kept
	if emptyRange(kept, bound) {
		return nil
	}
	s := strings.TrimSuffix(path, "/") + "?" + link.Encode()
	return &s
}

// emptyRange: lower is the max of gt (+1) and gte, upper the min of lt (-1)
// and lte; a page past an upper bound below the lower one can hold nothing.
func emptyRange(values []QueryValue, bound func(string) (int64, bool)) bool {
	var lower, upper int64
	hasLower, hasUpper := false, false
	for _, v := range values {
		op, raw, ok := model.SplitOperator(v.Raw)
		if !ok {
			continue
		}
		n, ok := bound(raw)
		if !ok {
			continue
		}
		switch op {
		case model.OpGt, model.OpGte:
			if op == model.OpGt {
				n++
			}
			if !hasLower || n > lower {
				lower, hasLower = n, true
			}
		case model.OpLt, model.OpLte:
			if op == model.OpLt {
				n--
			}
			if !hasUpper || n < upper {
				upper, hasUpper = n, true
			}
		}
	}
	return hasLower && hasUpper && upper < lower
}
