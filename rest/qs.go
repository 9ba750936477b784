package rest

import (
	"strconv"
	"strings"
)

// This file is qs's second pass for keys with brackets, as the mirror node
// configures qs (depth 1, arrayLimit 100, throwing): each raw key becomes a
// value — a string, an array (possibly with holes) or an object — merged
// into the result under its name, and the holes are dropped at the end.
// The rare query strings with brackets come here; the others never build
// these values (ParseQuery).

// jsValue is a JavaScript value as qs builds it: a string, an array (nil
// elements are holes) or a plain object.
type jsValue struct {
	kind  jsKind
	str   string
	elems []*jsValue
	obj   *jsObject
}

type jsKind uint8

const (
	jsString jsKind = iota
	jsArray
	jsObjectKind
)

// jsObject is a plain object: its keys as Object.keys lists them (array
// indexes first in numeric order, then the others in insertion order).
type jsObject struct {
	keys []string
	vals map[string]*jsValue
}

func newObject() *jsObject { return &jsObject{vals: map[string]*jsValue{}} }

func (o *jsObject) set(k string, v *jsValue) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jsObject) ownKeys() []string {
	keys := append([]string(nil), o.keys...)
	sortLikeObjectKeys(keys)
	return keys
}

func str(s string) *jsValue { return &jsValue{kind: jsString, str: s} }

// parseBrackets turns the grouped raw keys into the mirror node's query.
func parseBrackets(order []*rawKey) (*Query, error) {
	top := newObject()
	for _, k := range order {
		var leaf *jsValue
		if len(k.values) == 1 {
			leaf = str(k.values[0])
		} else {
			leaf = &jsValue{kind: jsArray}
			for _, v := range k.values {
				leaf.elems = append(leaf.elems, str(v))
			}
		}
		v, err := keyValue(k.name, leaf)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		mergeInto(top, v)
	}
	q := &Query{Values: map[string][]QueryValue{}}
	for _, name := range top.ownKeys() {
		lower := strings.ToLower(name)
		if _, seen := q.Values[lower]; !seen {
			q.Keys = append(q.Keys, lower)
		}
		v := compact(top.vals[name])
		switch v.kind {
		case jsString:
			q.add(lower, QueryValue{Raw: v.str})
		case jsArray:
			for _, e := range v.elems {
				q.add(lower, QueryValue{Raw: e.str, Object: e.kind != jsString})
			}
		default:
			q.add(lower, QueryValue{Object: true})
		}
	}
	sortLikeObjectKeys(q.Keys)
	return q, nil
}

// keyValue is what the raw key name with value leaf adds to the result: an
// object {parent: …} or, for a key that starts with a bracket, the
// bracket's value itself; nil when qs drops the key.
func keyValue(name string, leaf *jsValue) (*jsValue, error) {
	if name == "" {
		return nil, nil
	}
	open, closing := bracketSegment(name, 0)
	if open < 0 {
		if prototypeKeys[name] {
			return nil, nil
		}
		o := newObject()
		o.set(name, leaf)
		return &jsValue{kind: jsObjectKind, obj: o}, nil
	}
	parent, segment := name[:open], name[open+1:closing]
	if (parent != "" && prototypeKeys[parent]) || prototypeKeys[segment] {
		return nil, nil
	}
	if next, _ := bracketSegment(name, closing+1); next >= 0 {
		return nil, errDepth
	}
	inner, err := segmentValue(segment, leaf)
	if err != nil {
		return nil, err
	}
	if parent == "" {
		return inner, nil
	}
	o := newObject()
	o.set(parent, inner)
	return &jsValue{kind: jsObjectKind, obj: o}, nil
}

// bracketSegment finds, from position from, the first "[…]" whose inside
// holds no bracket; open is -1 when there is none.
func bracketSegment(s string, from int) (open, closing int) {
	for i := from; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		j := strings.IndexAny(s[i+1:], "[]")
		if j >= 0 && s[i+1+j] == ']' {
			return i, i + 1 + j
		}
	}
	return -1, -1
}

// segmentValue is the value of one bracket segment holding leaf: `[]` an
// array of the values, `[n]` an array with leaf at index n (n below the
// array limit; at or past it qs throws), anything else an object.
func segmentValue(segment string, leaf *jsValue) (*jsValue, error) {
	if segment == "" {
		arr := &jsValue{kind: jsArray}
		if leaf.kind == jsArray {
			arr.elems = append(arr.elems, leaf.elems...)
		} else {
			arr.elems = append(arr.elems, leaf)
		}
		return arr, nil
	}
	if n, ok := canonicalIndex(segment); ok {
		if n >= maxRepeatedValues {
			return nil, errArrayLimit
		}
		arr := &jsValue{kind: jsArray, elems: make([]*jsValue, n+1)}
		arr.elems[n] = leaf
		return arr, nil
	}
	o := newObject()
	if segment != "__proto__" {
		o.set(segment, leaf)
	}
	return &jsValue{kind: jsObjectKind, obj: o}, nil
}

// canonicalIndex reports whether s is a non-negative integer written as
// JavaScript writes it back (no sign, no leading zero), as qs requires of
// an array index.
func canonicalIndex(s string) (int, bool) {
	if len(s) == 0 || len(s) > 15 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && s[0] != '+'
}

// mergeInto merges source's keys (an object's, or an array's indexes) into
// the object top, key by key.
func mergeInto(top *jsObject, source *jsValue) {
	for _, k := range ownKeysOf(source) {
		v := member(source, k)
		if old, ok := top.vals[k]; ok {
			v = merge(old, v)
		}
		top.set(k, v)
	}
}

// ownKeysOf lists an object's keys or an array's present indexes.
func ownKeysOf(v *jsValue) []string {
	switch v.kind {
	case jsObjectKind:
		return v.obj.ownKeys()
	case jsArray:
		var keys []string
		for i, e := range v.elems {
			if e != nil {
				keys = append(keys, strconv.Itoa(i))
			}
		}
		return keys
	}
	return nil
}

func member(v *jsValue, k string) *jsValue {
	if v.kind == jsObjectKind {
		return v.obj.vals[k]
	}
	i, _ := strconv.Atoi(k)
	return v.elems[i]
}

// merge is qs's merge of a later value into an earlier one under one key.
func merge(target, source *jsValue) *jsValue {
	switch {
	case source.kind == jsString:
		switch target.kind {
		case jsArray:
			target.elems = append(target.elems, source)
			return target
		default: // a string or an object: both, in order
			return &jsValue{kind: jsArray, elems: []*jsValue{target, source}}
		}
	case target.kind == jsString:
		out := &jsValue{kind: jsArray, elems: []*jsValue{target}}
		if source.kind == jsArray {
			out.elems = append(out.elems, source.elems...)
		} else {
			out.elems = append(out.elems, source)
		}
		return out
	case target.kind == jsArray && source.kind == jsArray:
		for i, item := range source.elems {
			if item == nil {
				continue
			}
			if i < len(target.elems) && target.elems[i] != nil {
				if t := target.elems[i]; t.kind != jsString && item.kind != jsString {
					target.elems[i] = merge(t, item)
				} else {
					target.elems = append(target.elems, item)
				}
				continue
			}
			for len(target.elems) <= i {
				target.elems = append(target.elems, nil)
			}
			target.elems[i] = item
		}
		return target
	}
	// an object on either side: merged key by key
	o := newObject()
	mergeInto(o, target)
	mergeInto(o, source)
	return &jsValue{kind: jsObjectKind, obj: o}
}

// compact drops the holes of every array, as qs does before it returns.
func compact(v *jsValue) *jsValue {
	switch v.kind {
	case jsArray:
		out := v.elems[:0]
		for _, e := range v.elems {
			if e != nil {
				out = append(out, compact(e))
			}
		}
		v.elems = out
	case jsObjectKind:
		for _, k := range v.obj.keys {
			v.obj.vals[k] = compact(v.obj.vals[k])
		}
	}
	return v
}
