package rest

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Query is a parsed query string as the mirror node sees it after `qs` and its
// own lower-casing: keys lower-cased and merged in the order of a JavaScript
// object's keys, each with its values in order. Bracket keys (`a[]`, `a[0]`)
// add values to `a`; a value that qs makes an object or a nested array
// (`a[b]=1`) is marked Object.
type Query struct {
	Keys   []string
	Values map[string][]QueryValue
}

// QueryValue is one value as given (URL-decoded). Object marks a value that
// qs would have parsed into an object or a nested array rather than a string.
type QueryValue struct {
	Raw    string
	Object bool
}

const (
	maxRepeatedValues = 100  // hiero.mirror.rest.query.maxRepeatedQueryParameters, qs's arrayLimit
	maxParameters     = 1000 // qs parameterLimit
)

// queryError is a parse failure qs reports as a RangeError (400).
type queryError struct{ message string }

func (e *queryError) Error() string { return e.message }

var (
	errArrayLimit = &queryError{fmt.Sprintf("Array limit exceeded. Only %d elements allowed in an array.", maxRepeatedValues)}
	errDepth      = &queryError{"Input depth exceeded depth option of 1 and strictDepth is true"}
)

// rawKey is a key as qs first groups values: its full decoded text,
// brackets included.
type rawKey struct {
	name   string
	values []string
}

// prototypeKeys are the properties of JavaScript's Object.prototype: qs
// drops a key (or a bracket segment) spelt as one (allowPrototypes is
// false), before the mirror node lower-cases anything.
var prototypeKeys = map[string]bool{
	"constructor": true, "__defineGetter__": true, "__defineSetter__": true, "hasOwnProperty": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toString": true, "valueOf": true, "__proto__": true,
	"toLocaleString": true,
}

// ParseQuery parses a raw query string with qs's rules as the mirror node
// configures them (rest/middleware/requestHandler.js): arrayLimit 100 and
// parameterLimit 1000 (both throwing), depth 1 with strictDepth, '+' as
// space, undecodable escapes kept as they are; then the mirror node's
// merge of keys that differ only in case.
func ParseQuery(raw string) (*Query, error) {
	q := &Query{Values: map[string][]QueryValue{}}
	if raw == "" {
		return q, nil
	}
	if strings.Contains(raw, "%5") {
		// qs reads encoded brackets as brackets before anything else
		raw = replaceEncodedBrackets(raw)
	}
	order, err := groupValues(raw)
	if err != nil {
		return nil, err
	}
	if strings.IndexByte(raw, '[') >= 0 {
		return parseBrackets(order)
	}
	// Without brackets every raw key is one top-level key whose values
	// are strings: the lower-casing merge is all there is.
	for _, k := range order {
		if k.name == "" || prototypeKeys[k.name] {
			continue
		}
		lower := strings.ToLower(k.name)
		if _, seen := q.Values[lower]; !seen {
			q.Keys = append(q.Keys, lower)
		}
		for _, v := range k.values {
			q.add(lower, QueryValue{Raw: v})
		}
	}
	sortLikeObjectKeys(q.Keys)
	return q, nil
}

func (q *Query) add(key string, v QueryValue) {
	if key == "order" || key == "result" {
		v.Raw = strings.ToLower(v.Raw)
	}
	q.Values[key] = append(q.Values[key], v)
}

func replaceEncodedBrackets(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && s[i+1] == '5' {
			switch s[i+2] {
			case 'b', 'B':
				b.WriteByte('[')
				i += 2
				continue
			case 'd', 'D':
				b.WriteByte(']')
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// groupValues is qs's first pass: the parts split at '&', each key decoded
// with its brackets, values gathered per such key in order. The 101st value
// of one key given with '=' exceeds the array limit.
func groupValues(raw string) ([]*rawKey, error) {
	if strings.Count(raw, "&") >= maxParameters {
		return nil, &queryError{fmt.Sprintf("Parameter limit exceeded. Only %d parameters allowed.", maxParameters)}
	}
	var order []*rawKey
	byName := map[string]*rawKey{}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		pos := strings.Index(part, "]=")
		if pos >= 0 {
			pos++
		} else {
			pos = strings.IndexByte(part, '=')
		}
		var key, val string
		if pos < 0 {
			key = qsDecode(part)
		} else {
			key, val = qsDecode(part[:pos]), qsDecode(part[pos+1:])
		}
		k := byName[key]
		if k != nil && pos >= 0 && len(k.values) >= maxRepeatedValues {
			return nil, errArrayLimit
		}
		if k == nil {
			k = &rawKey{name: key}
			byName[key] = k
			order = append(order, k)
		}
		k.values = append(k.values, val)
	}
	// qs's second pass walks the raw keys as a JavaScript object lists
	// them: array indexes first (rare: only then is there anything to sort).
	for _, k := range order {
		if _, ok := arrayIndexKey(k.name); ok {
			sort.SliceStable(order, func(i, j int) bool {
				ni, iok := arrayIndexKey(order[i].name)
				nj, jok := arrayIndexKey(order[j].name)
				return iok && (!jok || ni < nj)
			})
			break
		}
	}
	return order, nil
}

// sortLikeObjectKeys orders keys as Object.keys lists them: array indexes
// first, in numeric order, then the others as they came.
func sortLikeObjectKeys(keys []string) {
	for _, k := range keys {
		if _, ok := arrayIndexKey(k); ok {
			sort.SliceStable(keys, func(i, j int) bool {
				ni, iok := arrayIndexKey(keys[i])
				nj, jok := arrayIndexKey(keys[j])
				return iok && (!jok || ni < nj)
			})
			return
		}
	}
}

// arrayIndexKey reports whether a property name is an array index in
// JavaScript's sense (a canonical decimal below 2^32-1), with its value.
func arrayIndexKey(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + uint64(s[i]-'0')
	}
	return n, n < 1<<32-1
}

// qsDecode is qs's decoder: '+' is a space; a malformed escape leaves the
// string as it was (with the '+' replaced).
func qsDecode(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.ContainsRune(s, '%') {
		return s
	}
	d, err := url.PathUnescape(s)
	if err != nil || !utf8.ValidString(d) {
		// decodeURIComponent also refuses escapes that are not UTF-8
		return s
	}
	return d
}

// Last is the last value of key, for parameters where the last one wins.
func (q *Query) Last(key string) (QueryValue, bool) {
	v := q.Values[key]
	if len(v) == 0 {
		return QueryValue{}, false
	}
	return v[len(v)-1], true
}

// Encode writes the query back as the mirror node writes links: keys in
// order, repeated keys as repeated pairs, values as decoded (not re-encoded).
func (q *Query) Encode() string {
	var b strings.Builder
	for _, k := range q.Keys {
		for _, v := range q.Values[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(v.Raw)
		}
	}
	return b.String()
}
