package seed

import (
	"strconv"
)

// Message kinds.
const (
	kindText = iota
	kindJSON
	kindBinary
	kindChunks // a chunk group, possibly of one chunk
)

var words = []string{
	"ledger", "consensus", "topic", "message", "sensor", "reading", "temperature", "humidity", "payment",
	"invoice", "shipment", "container", "port", "audit", "record", "hash", "node", "relay", "batch", "order",
	"token", "transfer", "approved", "pending", "settled", "carbon", "credit", "vote", "proposal", "oracle",
	"price", "feed", "the", "a", "of", "and", "to", "from", "with", "at", "café", "naïve", "Grüße", "日本語",
	"данные", "✓", "🚀", "ñandú", `"quoted"`, "line\nbreak", "tab\tstop", `back\slash`, "<b>&amp;</b>",
	"42", "3.14", "0xdeadbeef", "2023-11-14T22:13:20Z",
}

// appendText appends words up to about n bytes; with exact it cuts at n bytes
// even inside a UTF-8 sequence, as chunking a long message does.
func appendText(b []byte, r *rng, n int, exact bool) []byte {
	start := len(b)
	for len(b)-start < n {
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, words[r.intn(len(words))]...)
	}
	if exact {
		b = b[:start+n]
	}
	return b
}

func appendDecimal(b []byte, v int64, scale int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/scale, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, v%scale+scale, 10) // leading 1 keeps the zeros
	return append(b, frac[1:]...)
}

func appendJSON(b []byte, r *rng, o *Options, seq int64) []byte {
	switch r.intn(4) {
	case 0:
		b = append(b, `{"type":"temperature","device":"sensor-`...)
		b = strconv.AppendInt(b, int64(r.intn(500)), 10)
		b = append(b, `","value":`...)
		b = appendDecimal(b, int64(r.intn(6000))-1000, 100)
		b = append(b, `,"unit":"C","seq":`...)
		b = strconv.AppendInt(b, seq, 10)
		return append(b, '}')
	case 1:
		b = append(b, `{"type":"payment","from":"`...)
		b = appendEntity(b, o.AccountID(r.intn(Accounts)))
		b = append(b, `","to":"`...)
		b = appendEntity(b, o.AccountID(r.intn(Accounts)))
		b = append(b, `","amount":`...)
		b = strconv.AppendInt(b, int64(r.next()%10_000_000_000), 10)
		b = append(b, `,"currency":"HBAR","memo":"invoice `...)
		b = strconv.AppendInt(b, int64(r.intn(100_000)), 10)
		return append(b, `"}`...)
	case 2:
		b = append(b, `{"event":"shipment.scanned","container":"MSCU`...)
		b = strconv.AppendInt(b, int64(1_000_000+r.intn(9_000_000)), 10)
		b = append(b, `","port":"`...)
		b = append(b, [...]string{"NLRTM", "SGSIN", "CNSHA", "USLAX", "DEHAM"}[r.intn(5)]...)
		b = append(b, `","tags":["reefer","priority"],"ok":`...)
		b = strconv.AppendBool(b, r.intn(10) != 0)
		return append(b, '}')
	default:
		b = append(b, `{"did":"did:hedera:mainnet:z6Mk`...)
		for range 16 {
			b = append(b, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"[r.intn(58)])
		}
		b = append(b, `","op":"update","version":`...)
		b = strconv.AppendInt(b, int64(1+r.intn(9)), 10)
		b = append(b, `,"meta":{"nested":{"depth":2,"note":"ünïcödé ✓"},"nullable":null}}`...)
		return b
	}
}

func appendEntity(b []byte, id int64) []byte {
	b = strconv.AppendInt(b, int64(uint64(id)>>54&0x3ff), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, id>>38&0xffff, 10)
	b = append(b, '.')
	return strconv.AppendInt(b, id&(1<<38-1), 10)
}

// stream is the events of one topic (its messages) or of the failed
// submissions, in timestamp order.
type stream struct {
	idx    int
	id     int64 // topic id; 0 for the failed stream
	failed bool
	n, seq int64 // events in all; the next one (1-based)
	base   int64 // first cell of the stream's class
	period int64
	ts     int64 // timestamp of event seq

	// the chunk group in progress
	left, total, num int32
	lastLen          int
	legacy           bool
	scheduled        bool
	nonce            int32
	payer            int64
	validStart       int64
	initTx           []byte
}

// event is one message or failed submission.
type event struct {
	failed           bool
	ts, topic, seq   int64
	payer            int64
	validStart       int64
	h                uint64
	chunkNum, chunks int32 // 0: not chunked
	legacy           bool  // legacy chunk info: valid_start_timestamp, no initial_transaction_id
	initTx           []byte
	scheduled        bool
	nonce            int32
	result           int16
	nullVersion      bool
	message          []byte // only with payloads
	runningHash      []byte // only with payloads
}

// timeline merges the streams by timestamp (a binary heap of stream indexes).
type timeline struct {
	o        *Options
	g        gen
	cell     int64
	streams  []stream
	heap     []int32
	payloads bool
	ev       event
	buf      []byte
	hash     [48]byte
}

func newTimeline(o *Options, payloads bool) *timeline {
	t := &timeline{o: o, g: newGen(o.Seed), cell: o.cell(), payloads: payloads, buf: make([]byte, 0, 4096)}
	if o.Topics == 0 {
		return t
	}
	start := o.MessagesStart()
	t.streams = make([]stream, o.Topics+1)
	for i := range t.streams {
		s := &t.streams[i]
		s.idx, s.seq, s.base = i, 1, start+int64(i)*slot
		if i < o.Topics {
			s.id, s.n = o.TopicID(i), o.TopicMessages(i)
			s.initTx = make([]byte, 0, 48)
		} else {
			s.failed, s.n = true, o.FailedTransactions()
		}
		s.period = o.period(s.n)
		if s.n > 0 {
			s.ts = t.g.eventTimestamp(s.base, s.period, t.cell, i, 1)
			t.heap = append(t.heap, int32(i))
		}
	}
	for i := len(t.heap)/2 - 1; i >= 0; i-- {
		t.down(i)
	}
	return t
}

func (t *timeline) less(a, b int32) bool { return t.streams[a].ts < t.streams[b].ts }

func (t *timeline) down(i int) {
	h := t.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && t.less(h[r], h[l]) {
			m = r
		}
		if !t.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// next advances to the next event, in timestamp order, into t.ev.
func (t *timeline) next() bool {
	if len(t.heap) == 0 {
		return false
	}
	s := &t.streams[t.heap[0]]
	ts, seq := s.ts, s.seq
	if s.seq++; s.seq > s.n {
		last := len(t.heap) - 1
		t.heap[0] = t.heap[last]
		t.heap = t.heap[:last]
	} else {
		s.ts = t.g.eventTimestamp(s.base, s.period, t.cell, s.idx, s.seq)
	}
	t.down(0)
	if s.failed {
		t.failedEvent(seq, ts)
	} else {
		t.messageEvent(s, seq, ts)
	}
	return true
}

// failedResults are results of a failed ConsensusSubmitMessage: INVALID_SIGNATURE,
// INSUFFICIENT_PAYER_BALANCE, INVALID_TOPIC_ID, INVALID_CHUNK_NUMBER.
var failedResults = []int16{7, 10, 150, 163}

func (t *timeline) failedEvent(seq, ts int64) {
	h := t.g.hash(tagFailed, 0, uint64(seq))
	t.ev = event{
		failed:     true,
		ts:         ts,
		topic:      t.o.TopicID(int(h % uint64(t.o.Topics))),
		payer:      t.o.AccountID(int(h >> 8 % Accounts)),
		validStart: ts - 2*second - int64(h>>16%uint64(8*second)),
		h:          h,
		result:     failedResults[h>>48%uint64(len(failedResults))],
	}
}

// kindOf is the kind of the message that starts at seq when no chunk group
// is in progress, and the group size for kindChunks. Every topic of 8
// messages or more starts with text, JSON, binary, a 3-chunk group in the new
// form and a 2-chunk group in the legacy form (seq 1–8).
func (t *timeline) kindOf(s *stream, seq int64, h uint64) (kind int, size int32, legacy bool) {
	if s.n >= 8 && seq <= 8 {
		switch seq {
		case 1:
			return kindText, 0, false
		case 2:
			return kindJSON, 0, false
		case 3:
			return kindBinary, 0, false
		case 4:
			return kindChunks, 3, false
		default: // 7
			return kindChunks, 2, true
		}
	}
	legacy = h>>40%4 == 0
	switch r := h % 1000; {
	case r < 35:
		size = 2 + int32(h>>20%4)
		return kindChunks, int32(min(int64(size), s.n-seq+1)), legacy
	case r < 85:
		return kindChunks, 1, legacy
	case r < 480:
		return kindText, 0, false
	case r < 730:
		return kindJSON, 0, false
	case r < 830:
		return kindBinary, 0, false
	default:
		return kindText, 0, false
	}
}

func (t *timeline) messageEvent(s *stream, seq, ts int64) {
	o := t.o
	h := t.g.hash(tagMessage, uint64(s.idx), uint64(seq))
	ev := &t.ev
	*ev = event{ts: ts, topic: s.id, seq: seq, h: h, result: ResultSuccess}
	ev.nullVersion = seq > 8 && h%211 == 0

	kind := kindChunks
	if s.left == 0 {
		var size int32
		var legacy bool
		kind, size, legacy = t.kindOf(s, seq, h)
		if kind == kindChunks {
			hg := t.g.hash(tagGroup, uint64(s.idx), uint64(seq))
			s.total, s.left, s.num, s.legacy = size, size, 0, legacy
			s.scheduled = !legacy && seq > 8 && hg%61 == 7
			s.nonce = 0
			if s.scheduled {
				s.nonce = int32(hg >> 40 % 3)
			}
			s.payer = o.AccountID(int(hg >> 8 % Accounts))
			s.validStart = ts - 2*second - int64(hg>>16%uint64(8*second))
			s.lastLen = 1 + int(hg>>48%chunkSize)
			if size == 1 {
				s.lastLen = 1 + int(hg>>48%600)
			}
			s.initTx = s.initTx[:0]
			if !legacy {
				s.initTx = appendTransactionID(s.initTx, s.validStart, s.payer, s.scheduled, s.nonce)
			}
		}
	}

	var r rng
	if t.payloads {
		r = t.g.rng(tagPayload, uint64(s.idx), uint64(seq))
	}
	buf := t.buf[:0]
	if kind == kindChunks {
		s.num++
		s.left--
		ev.chunkNum, ev.chunks, ev.legacy = s.num, s.total, s.legacy
		ev.payer, ev.validStart = s.payer, s.validStart+int64(s.num-1)
		ev.scheduled, ev.nonce = s.scheduled, s.nonce
		if !s.legacy {
			ev.initTx = s.initTx
		}
		if t.payloads {
			n := chunkSize
			if s.left == 0 {
				n = s.lastLen
			}
			buf = appendText(buf, &r, n, true)
		}
	} else {
		ev.payer = o.AccountID(int(h >> 8 % Accounts))
		ev.validStart = ts - 2*second - int64(h>>16%uint64(8*second))
		if t.payloads {
			switch kind {
			case kindText:
				buf = appendText(buf, &r, 12+r.intn(240), false)
			case kindJSON:
				buf = appendJSON(buf, &r, o, seq)
			case kindBinary:
				// A lead byte that no UTF-8 text starts with, then noise.
				buf = append(buf, [...]byte{0xff, 0xfe, 0xc0, 0x80}[r.intn(4)])
				buf = r.appendBytes(buf, 15+r.intn(112))
			}
		}
	}
	if t.payloads {
		t.buf = buf
		ev.message = buf
		rh := t.g.rng(tagRunningHash, uint64(s.idx), uint64(seq))
		ev.runningHash = rh.appendBytes(t.hash[:0], 48)
	}
}
