package rest

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"mirrorql/model"
)

// jsonBuf builds response bodies by appending, in the exact key order the
// mirror node emits; profiles showed reflection-based encoding dominating
// the by-sequence route.
type jsonBuf struct{ b []byte }

var bufPool = sync.Pool{New: func() any { return &jsonBuf{b: make([]byte, 0, 4096)} }}

func getBuf() *jsonBuf { j := bufPool.Get().(*jsonBuf); j.b = j.b[:0]; return j }

func putBuf(j *jsonBuf) {
	if cap(j.b) <= 1<<20 {
		bufPool.Put(j)
	}
}

func (j *jsonBuf) raw(s string) { j.b = append(j.b, s...) }
func (j *jsonBuf) null()        { j.b = append(j.b, "null"...) }
func (j *jsonBuf) int(v int64)  { j.b = strconv.AppendInt(j.b, v, 10) }
func (j *jsonBuf) bool(v bool)  { j.b = strconv.AppendBool(j.b, v) }

// key writes `"name":` with a leading comma unless first.
func (j *jsonBuf) key(name string, first bool) {
	if !first {
		j.b = append(j.b, ',')
	}
	j.b = append(j.b, '"')
	j.b = append(j.b, name...)
	j.b = append(j.b, '"', ':')
}

func (j *jsonBuf) strPtr(s *string) {
	if s == nil {
		j.null()
		return
	}
	j.str(*s)
}

func (j *jsonBuf) entityID(id model.EntityID) {
	if id.IsNull() {
		j.null()
		return
	}
	j.b = append(j.b, '"')
	j.b = id.Append(j.b)
	j.b = append(j.b, '"')
}

func (j *jsonBuf) entityIDPtr(id *model.EntityID) {
	if id == nil {
		j.null()
		return
	}
	j.entityID(*id)
}

func (j *jsonBuf) timestamp(t model.Timestamp) {
	j.b = append(j.b, '"')
	j.b = t.Append(j.b)
	j.b = append(j.b, '"')
}

func (j *jsonBuf) timestampPtr(t *model.Timestamp) {
	if t == nil {
		j.null()
		return
	}
	j.timestamp(*t)
}

func (j *jsonBuf) boolPtr(v *bool) {
	if v == nil {
		j.null()
		return
	}
	j.bool(*v)
}

func (j *jsonBuf) keyObject(k *model.Key) {
	if k == nil {
		j.null()
		return
	}
	j.raw(`{"_type":`)
	j.str(k.Type)
	j.raw(`,"key":`)
	j.str(k.Key)
	j.b = append(j.b, '}')
}

const hexDigits = "0123456789abcdef"

// str writes a JSON string escaped as the mirror node's json-bigint
// serializer (Crockford's json2) escapes: quote, backslash, the C0 and C1
// controls and a set of invisible or separator code points, as \uXXXX.
func (j *jsonBuf) str(s string) {
	j.b = append(j.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			j.b = append(j.b, s[start:i]...)
			switch c {
			case '"':
				j.b = append(j.b, '\\', '"')
			case '\\':
				j.b = append(j.b, '\\', '\\')
			case '\b':
				j.b = append(j.b, '\\', 'b')
			case '\f':
				j.b = append(j.b, '\\', 'f')
			case '\n':
				j.b = append(j.b, '\\', 'n')
			case '\r':
				j.b = append(j.b, '\\', 'r')
			case '\t':
				j.b = append(j.b, '\\', 't')
			default:
				j.unicodeEscape(rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if json2Escapes(r) {
			j.b = append(j.b, s[start:i]...)
			j.unicodeEscape(r)
			start = i + size
		}
		i += size
	}
	j.b = append(j.b, s[start:]...)
	j.b = append(j.b, '"')
}

func (j *jsonBuf) unicodeEscape(r rune) {
	j.b = append(j.b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// json2Escapes is json2's `escapable` class above ASCII.
func json2Escapes(r rune) bool {
	switch {
	case r >= 0x7f && r <= 0x9f, r == 0xad, r >= 0x600 && r <= 0x604, r == 0x70f, r == 0x17b4, r == 0x17b5,
		r >= 0x200c && r <= 0x200f, r >= 0x2028 && r <= 0x202f, r >= 0x2060 && r <= 0x206f,
		r == 0xfeff, r >= 0xfff0 && r <= 0xffff:
		return true
	}
	return false
}
