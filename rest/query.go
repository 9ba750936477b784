package rest

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Query is a parsed query string as the mirror node sees it after `qs` and its
// own lower-casing: keys lower-cased and merged in order of first appearance,
// each with its values in order. Bracket keys (`a[]`, `a[0]`) add values to
// `a`; an object key (`a[b]`) gives `a` a value that no parameter accepts.
type Query struct {
	Keys   []string
	Values map[string][]QueryValue
	// Names has, for each distinct key as written (qs groups keys
	// case-sensitively), its lower-cased name, in the order of Keys; nil
	// when no two keys differ only in case, so that it is Keys. An unknown
	// parameter is reported once per key as written (Unknown).
	Names []string
}

// QueryValue is one value as given (URL-decoded). Object marks a value that
// qs would have parsed into an object rather than a string.
type QueryValue struct {
	Raw    string
	Object bool
}

const (
	maxRepeatedValues = 100  // hiero.mirror.rest.query.maxRepeatedQueryParameters
	maxParameters     = 1000 // qs parameterLimit
)

// queryError is a parse failure qs reports as a RangeError (400).
type queryError struct{ message string }

func (e *queryError) Error() string { return e.message }

// rawKey is a key as qs first groups values: its full decoded text,
// brackets included.
type rawKey struct {
	name   string
	values []string
}

// prototypeKeys are dropped by qs (allowPrototypes is false), before the
// mirror node lower-cases anything.
var prototypeKeys = map[string]bool{
	"constructor": true, "__defineGetter__": true, "__defineSetter__": true, "hasOwnProperty": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toString": true, "valueOf": true, "__proto__": true,
	"toLocaleString": true,
}

// ParseQuery parses a raw query string with qs's rules as the mirror node
// configures them: arrayLimit 100 and parameterLimit 1000 (both throwing),
// depth 1 with strictDepth, '+' as space, undecodable escapes kept as they are.
func ParseQuery(raw string) (*Query, error) {
	q := &Query{Values: map[string][]QueryValue{}}
	if raw == "" {
		return q, nil
	}
	parts := strings.Split(raw, "&")
	if len(parts) > maxParameters {
		return nil, &queryError{fmt.Sprintf("Parameter limit exceeded. Only %d parameters allowed.", maxParameters)}
	}
	// qs first groups values by their full decoded key (brackets included)
	// and counts repeats per such key.
	var order []*rawKey
	byName := map[string]*rawKey{}
	for _, part := range parts {
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
		if key == "" {
			continue
		}
		k := byName[key]
		if k == nil {
			k = &rawKey{name: key}
			byName[key] = k
			order = append(order, k)
		} else if len(k.values) >= maxRepeatedValues {
			return nil, &queryError{fmt.Sprintf("Array limit exceeded. Only %d elements allowed in an array.", maxRepeatedValues)}
		}
		k.values = append(k.values, val)
	}
	mixedCase := false
	for _, k := range order {
		name, object, err := splitBrackets(k.name)
		if err != nil {
			return nil, err
		}
		if name == "" || prototypeKeys[name] {
			continue
		}
		lower := strings.ToLower(name)
		mixedCase = mixedCase || lower != name
		if _, seen := q.Values[lower]; !seen {
			q.Keys = append(q.Keys, lower)
		}
		for _, v := range k.values {
			if lower == "order" || lower == "result" {
				v = strings.ToLower(v)
			}
			q.Values[lower] = append(q.Values[lower], QueryValue{Raw: v, Object: object})
		}
	}
	// JavaScript objects list integer-like keys first, in numeric order:
	// that is the order in which the mirror node sees (and reports) them.
	sortLikeObjectKeys(q.Keys)
	if mixedCase {
		// Only keys with capitals can be two spellings of one name.
		q.Names = writtenNames(order)
	}
	return q, nil
}

// writtenNames is the lower-cased name of each distinct key as written, in
// order of appearance (then sorted as Keys are); nil when that is Keys.
func writtenNames(order []*rawKey) []string {
	seen := make(map[string]bool, len(order))
	lowers := make(map[string]bool, len(order))
	var names []string
	variants := false
	for _, k := range order {
		name, _, err := splitBrackets(k.name)
		if err != nil || name == "" || prototypeKeys[name] || seen[name] {
			continue
		}
		seen[name] = true
		lower := strings.ToLower(name)
		variants = variants || lowers[lower]
		lowers[lower] = true
		names = append(names, lower)
	}
	if !variants {
		return nil
	}
	sortLikeObjectKeys(names)
	return names
}

func sortLikeObjectKeys(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool {
		ni, iok := arrayIndexKey(keys[i])
		nj, jok := arrayIndexKey(keys[j])
		return iok && (!jok || ni < nj)
	})
}

// WrittenNames is the lower-cased name of each distinct key as written: the
// mirror node reports an unknown parameter once per such key (docs/reference/behavior.md
// §1.4), so `Foo=1&foo=2` is two, `foo=1&foo=2` one.
func (q *Query) WrittenNames() []string {
	if q.Names == nil {
		return q.Keys
	}
	return q.Names
}

// splitBrackets applies qs's key parsing with depth 1: `a` and `a[]` or
// `a[<index ≤ 100>]` are plain values of a; `a[x]` is an object; a second
// bracket segment exceeds the depth.
func splitBrackets(key string) (name string, object bool, err error) {
	open := strings.IndexByte(key, '[')
	if open < 0 {
		return key, false, nil
	}
	closing := strings.IndexByte(key[open:], ']')
	if closing < 0 || strings.ContainsRune(key[open+1:open+closing], '[') {
		// not a bracket segment: qs keeps the key as it is
		return key, false, nil
	}
	segment := key[open+1 : open+closing]
	rest := key[open+closing+1:]
	if r := strings.IndexByte(rest, '['); r >= 0 && strings.IndexByte(rest[r:], ']') > 0 {
		return "", false, &queryError{"Input depth exceeded depth option of 1 and strictDepth is true"}
	}
	name = key[:open]
	if name == "" {
		// `[a]=1`: the segment itself becomes the key
		return segment, false, nil
	}
	if segment == "" || isArrayIndex(segment) {
		return name, false, nil
	}
	return name, true, nil
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

func isArrayIndex(s string) bool {
	if len(s) == 0 || len(s) > 3 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n <= maxRepeatedValues
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
