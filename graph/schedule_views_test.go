package graph_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"mirrorql/app/memstore"
	"mirrorql/graph"
	"mirrorql/graph/view"
	"mirrorql/model"
)

// scheduleRows are schedules of every shape a view writes: each admin key
// type and none, no entity row (memo and deleted null), executed, deleted,
// pending and expired at fixedNow, no signatures and several, one of them
// long enough for PostgreSQL's line feeds in its base64, and of an unknown
// type.
func scheduleRows() *memstore.Store {
	s := memstore.New()
	ts := func(sec int64) *model.Timestamp { t := model.Timestamp(sec * 1e9); return &t }
	yes, no := true, false
	memo := "a \"memo\"\n\\ é"
	ed25519 := append([]byte{0x12, 32}, bytes.Repeat([]byte{7}, 32)...)
	secp := append([]byte{0x3a, 33}, bytes.Repeat([]byte{2}, 33)...)
	list := []byte{0x32, 2, 0x0a, 0}
	ed, ecdsa, unknown := int16(3), int16(6), int16(42)
	sigs := []model.Signature{
		{ConsensusTimestamp: 1_234_567_800_000_000_003, PublicKeyPrefix: []byte{1, 2, 3}, Signature: bytes.Repeat([]byte{0xfb}, 64), Type: &ed},
		{ConsensusTimestamp: 1_234_567_800_000_000_004, PublicKeyPrefix: bytes.Repeat([]byte{9}, 33), Signature: bytes.Repeat([]byte{0xff}, 72), Type: &ecdsa},
		{ConsensusTimestamp: 1_234_567_800_000_000_005, PublicKeyPrefix: nil, Signature: []byte{}, Type: &unknown},
		{ConsensusTimestamp: 1_234_567_800_000_000_006, PublicKeyPrefix: []byte{4}, Signature: []byte{5}},
	}
	rows := []model.Schedule{
		{ScheduleID: 3001, Key: ed25519, HasEntity: true, Deleted: &no, Memo: &memo, Signatures: sigs, WaitForExpiry: true,
			ExpirationTime: ts(1_400_000_000)},
		{ScheduleID: 3002, Key: secp, HasEntity: true, Deleted: &yes, Memo: &memo, Signatures: sigs[:1]},
		{ScheduleID: 3003, Key: list, HasEntity: true, Deleted: &no, Memo: new(string), ExecutedTimestamp: ts(1_234_567_900)},
		{ScheduleID: 3004, TransactionBody: []byte{}},
		{ScheduleID: 3005, HasEntity: true, Deleted: &no, Memo: &memo, Signatures: sigs[2:]},
	}
	for i := range rows {
		r := rows[i]
		r.ConsensusTimestamp = model.Timestamp(1_234_567_800_000_000_000 + int64(i))
		if i == 4 {
			r.ConsensusTimestamp = model.Timestamp(fixedNow.UnixNano() - 1e9)
		}
		r.CreatorAccountID, r.PayerAccountID = 98, model.EntityID(99+i)
		if r.TransactionBody == nil {
			r.TransactionBody = bytes.Repeat([]byte{byte(i), 0xfe}, 10+i)
		}
		s.AddSchedules(r)
	}
	return s
}

const allScheduleFields = `__typename id adminKey { __typename type key } consensusTimestamp creatorAccountId payerAccountId
	deleted executedTimestamp expirationTime memo signatures { __typename consensusTimestamp publicKeyPrefix signature type }
	transactionBody waitForExpiry status`

// TestScheduleViewsWriteAsExecutor holds the schedules' views to gqlgen's
// executor, as TestViewsWriteAsExecutor the messages'.
func TestScheduleViewsWriteAsExecutor(t *testing.T) {
	t.Parallel()
	p := newViewPair(scheduleRows())
	for _, query := range []string{
		`{ schedules { nodes { ` + allScheduleFields + ` } } }`,
		`{ schedules(order: DESC, first: 2) { edges { __typename cursor node { ` + allScheduleFields + ` } } pageInfo { hasNextPage endCursor } } }`,
		`{ schedules { pageInfo { endCursor } nodes { id } edges { cursor } } }`,
		`{ schedules(scheduleId: {gt: "0.0.9999"}) { nodes { id } edges { cursor node { id } } } }`,
		`{ a: schedule(id: "0.0.3001") { ` + allScheduleFields + ` } b: schedule(id: "3004") { ` + allScheduleFields + ` } }`,
		`{ schedule(id: "0.0.1") { id } }`,
		`{ schedules { nodes { b: id a: memo id b: id k: adminKey { key } l: adminKey { type t: type } s: signatures { type } } } }`,
		`query { schedules { nodes { ...S ... on Schedule { status } ... { memo } } } }
			fragment S on Schedule { id signatures { ...G } adminKey { ...K } }
			fragment G on ScheduleSignature { signature type }
			fragment K on Key { type }`,
		`query($yes: Boolean!) { schedules { nodes { id @include(if: $yes) memo @skip(if: $yes)
			signatures @include(if: $yes) { type @skip(if: true) signature } ... @skip(if: $yes) { status } } } }`,
		`{ schedules { __typename nodes { __typename } edges { __typename node { __typename } } } }`,
		`{ a: schedules { nodes { id } } b: schedule(id: "x") { id } }`,
	} {
		got := p.same(t, query, map[string]any{"yes": true})
		if !bytes.HasPrefix(got, []byte("200 ")) {
			t.Errorf("not answered: %s", got)
		}
	}
}

// TestScheduleViewsRandomSelections: random selections of schedules'
// fields, in a page's nodes and edges and in a lookup.
func TestScheduleViewsRandomSelections(t *testing.T) {
	t.Parallel()
	p := newViewPair(scheduleRows())
	r := rand.New(rand.NewPCG(5, 6))
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	var object func(typ string, fields []string) string
	sub := map[string]func() string{
		"adminKey": func() string { return object("Key", []string{"__typename", "type", "key"}) },
		"signatures": func() string {
			return object("ScheduleSignature", []string{"__typename", "consensusTimestamp", "publicKeyPrefix", "signature", "type"})
		},
	}
	object = func(typ string, fields []string) string {
		var b strings.Builder
		b.WriteString(" {")
		for range 1 + r.IntN(6) {
			name := fields[r.IntN(len(fields))]
			field := name
			if r.IntN(4) == 0 { // an alias of its own: validation refuses one shared by two fields
				field = name + pick("1", "2") + ": " + name
			}
			if r.IntN(8) == 0 {
				field += " @skip(if: " + pick("true", "false") + ")"
			}
			if s := sub[name]; s != nil {
				field += s()
			}
			switch r.IntN(10) {
			case 0:
				b.WriteString(" ... on " + typ + " { " + field + " }")
			case 1:
				b.WriteString(" ... @include(if: " + pick("true", "false") + ") { " + field + " }")
			default:
				b.WriteString(" " + field)
			}
		}
		b.WriteString(" }")
		return b.String()
	}
	fields := strings.Fields(strings.NewReplacer("{", " ", "}", " ", "__typename type key", "", "__typename consensusTimestamp publicKeyPrefix signature type", "").Replace(allScheduleFields))
	for range 200 {
		sel := object("Schedule", fields)
		var query string
		switch r.IntN(4) {
		case 0:
			query = `{ schedules { nodes` + sel + ` } }`
		case 1:
			query = `{ schedules(order: DESC) { edges { cursor node` + sel + ` } } }`
		case 2:
			query = `{ schedules(first: 3) { nodes` + sel + ` edges { node` + sel + ` } } }`
		default:
			query = `{ schedule(id: "` + pick("3001", "3002", "3004", "0.0.3005") + `")` + sel + ` }`
		}
		if got := p.same(t, query, nil); bytes.Contains(got, []byte(`"errors"`)) {
			t.Errorf("%s: %s", query, got)
		}
	}
}

// TestEveryScheduleFieldIsWritten: the views write each field of Schedule,
// none of which is a resolver of gqlgen's (docs/graphql.md, "Performance").
func TestEveryScheduleFieldIsWritten(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	resolvers := reflect.TypeFor[graph.ResolverRoot]()
	if _, ok := resolvers.MethodByName("Schedule"); ok {
		t.Errorf("Schedule has resolvers (gqlgen.yml): the views do not call them")
	}
	for _, f := range schema.Types["Schedule"].Fields {
		if !view.WritesSchedule(f.Name) {
			t.Errorf("Schedule.%s is not written by the views (graph/view/schedules.go)", f.Name)
		}
	}
}

// TestSchedulesNeedNoGoroutines: a page of schedules with their signatures
// is written without a goroutine for any schedule or signature, where
// gqlgen's generated code starts one for each (the reference still does).
// Not parallel, as TestPageNeedsNoGoroutines.
func TestSchedulesNeedNoGoroutines(t *testing.T) {
	s := memstore.New()
	sig := model.Signature{ConsensusTimestamp: 1, PublicKeyPrefix: []byte{1}, Signature: []byte{2}}
	for id := model.EntityID(3000); id < 3100; id++ {
		s.AddSchedules(model.Schedule{ScheduleID: id, ConsensusTimestamp: model.Timestamp(id), CreatorAccountID: 2,
			PayerAccountID: 2, TransactionBody: []byte{1}, Signatures: []model.Signature{sig, sig}})
	}
	query := `{ schedules(first: 100) { nodes { id status signatures { type signature } } edges { cursor node { id } } } }`
	noGoroutinePerElement(t, newViewPair(s), query, 300, "a page of 100 schedules with 200 signatures")
}
