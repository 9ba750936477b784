package rest

import (
	"strconv"
	"sync"

	"mirrorql/model"
	"mirrorql/nodehttp"
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

// str writes s as the mirror node writes strings (nodehttp.AppendString).
func (j *jsonBuf) str(s string) { j.b = nodehttp.AppendString(j.b, s) }
