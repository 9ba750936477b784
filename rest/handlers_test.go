package rest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/model"
	"mirrorql/service/policy"
)

var errDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

// testLedger is the core over an in-memory store (app/memstore): the
// handlers' answers are checked without a database, and every rule of the
// core (no such topic, another topic's message) is app's own. down makes
// every question fail as the store does when the database cannot be
// reached.
func testLedger(down bool) *app.Ledger {
	s := memstore.New()
	for seq := int64(1); seq <= 3; seq++ {
		total := int32(2)
		m := model.TopicMessage{
			ConsensusTimestamp: model.Timestamp(1234567890_000000000 + seq),
			Message:            []byte("m"),
			RunningHash:        []byte{1},
			SequenceNumber:     seq,
			TopicID:            7,
		}
		if seq == 3 {
			// a chunk whose row has no chunk total: "total": null
			num := int32(1)
			m.ChunkNum = &num
			payer, start := model.EntityID(2), model.Timestamp(1234567880_000000000)
			m.PayerAccountID, m.ValidStartTimestamp = &payer, &start
		} else if seq == 2 {
			num := int32(1)
			m.ChunkNum, m.ChunkTotal = &num, &total
		}
		s.AddMessages(m)
	}
	if down {
		s.Fail(errDown)
	}
	return app.New(s, app.Rules{})
}

func serve(r *app.Ledger) *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = policy.ErrorHandler(nil)
	e.Pre(CanonicalRoute)
	New(r, Options{}).Register(e)
	return e
}

// TestHandlers checks the REST face over the core and an in-memory store: bodies,
// statuses and the Link header, without a database.
func TestHandlers(t *testing.T) {
	const (
		msg1 = `{"chunk_info":null,"consensus_timestamp":"1234567890.000000001","message":"bQ==","payer_account_id":null,` +
			`"running_hash":"AQ==","running_hash_version":3,"sequence_number":1,"topic_id":"0.0.7"}`
		msg2 = `{"chunk_info":{"initial_transaction_id":{"account_id":null,"nonce":null,"scheduled":null,"transaction_valid_start":null},` +
			`"number":1,"total":2},"consensus_timestamp":"1234567890.000000002","message":"bQ==","payer_account_id":null,` +
			`"running_hash":"AQ==","running_hash_version":3,"sequence_number":2,"topic_id":"0.0.7"}`
		msg3 = `{"chunk_info":{"initial_transaction_id":{"account_id":"0.0.2","nonce":null,"scheduled":null,"transaction_valid_start":"1234567880.000000000"},` +
			`"number":1,"total":null},"consensus_timestamp":"1234567890.000000003","message":"bQ==","payer_account_id":"0.0.2",` +
			`"running_hash":"AQ==","running_hash_version":3,"sequence_number":3,"topic_id":"0.0.7"}`
		unavailable = `{"_status":{"messages":[{"message":"Service unavailable"}]}}`
	)
	tests := []struct {
		name   string
		url    string
		down   bool
		status int
		body   string
		link   string
	}{
		{name: "a full page links to the next", url: "/api/v1/topics/7/messages?limit=2", status: http.StatusOK,
			body: `{"messages":[` + msg1 + `,` + msg2 + `],"links":{"next":"/api/v1/topics/7/messages?limit=2&timestamp=gt:1234567890.000000002"}}`,
			link: `</api/v1/topics/7/messages?limit=2&timestamp=gt:1234567890.000000002>; rel="next"`},
		{name: "the next page, its chunk total null", url: "/api/v1/topics/7/messages?limit=2&timestamp=gt:1234567890.000000002",
			status: http.StatusOK, body: `{"messages":[` + msg3 + `],"links":{"next":null}}`},
		{name: "desc pages down", url: "/api/v1/topics/0.0.7/messages?order=desc&limit=1", status: http.StatusOK,
			body: `{"messages":[` + msg3 + `],"links":{"next":"/api/v1/topics/0.0.7/messages?order=desc&limit=1&timestamp=lt:1234567890.000000003"}}`,
			link: `</api/v1/topics/0.0.7/messages?order=desc&limit=1&timestamp=lt:1234567890.000000003>; rel="next"`},
		{name: "a message", url: "/api/v1/topics/7/messages/3", status: http.StatusOK, body: msg3},
		{name: "a message not found", url: "/api/v1/topics/7/messages/9", status: http.StatusNotFound,
			body: `{"_status":{"messages":[{"message":"Not found"}]}}`},
		{name: "a message of another topic", url: "/api/v1/topics/8/messages/1234567890.000000001", status: http.StatusNotFound,
			body: `{"_status":{"messages":[{"message":"Not found"}]}}`},
		{name: "a topic not found", url: "/api/v1/topics/0.0.8/messages", status: http.StatusNotFound,
			body: `{"_status":{"messages":[{"message":"No such topic id - 0.0.8"}]}}`},
		{name: "a schedule not found", url: "/api/v1/schedules/0.0.9", status: http.StatusNotFound,
			body: `{"_status":{"messages":[{"message":"Not found"}]}}`},
		{name: "invalid first in query order, then unknown",
			url: "/api/v1/topics/7/messages?topic.id=7&sequencenumber=2_2&timestamp=18:34&limit=-1", status: http.StatusBadRequest,
			body: `{"_status":{"messages":[{"message":"Invalid parameter: sequencenumber"},{"message":"Invalid parameter: timestamp"},` +
				`{"message":"Invalid parameter: limit"},{"message":"Unknown query parameter: topic.id"}]}}`},
		{name: "path parameters", url: "/api/v1/topics/x/messages/y", status: http.StatusBadRequest,
			body: `{"_status":{"messages":[{"message":"Invalid parameter: topic.id"},{"message":"Invalid parameter: sequencenumber"}]}}`},
		{name: "unknown keys once per value on a list route", url: "/api/v1/topics/7/messages?Foo=1&foo=2&limit=x&FOO=3&foo=4&bar=1",
			status: http.StatusBadRequest,
			body: `{"_status":{"messages":[{"message":"Invalid parameter: limit"},{"message":"Unknown query parameter: foo"},` +
				`{"message":"Unknown query parameter: foo"},{"message":"Unknown query parameter: foo"},{"message":"Unknown query parameter: foo"},` +
				`{"message":"Unknown query parameter: bar"}]}}`},
		{name: "unknown keys once per name on a single-item route", url: "/api/v1/schedules/0.0.9?foo=1&Foo=2&foo=3", status: http.StatusBadRequest,
			body: `{"_status":{"messages":[{"message":"Unknown query parameter: foo"}]}}`},
		{name: "more values than the repeat limit, counted after the merge of spellings", url: "/api/v1/topics/7/messages?" +
			strings.Repeat("limit=1&", 50) + strings.Repeat("LIMIT=1&", 51) + "foo=1&order=x", status: http.StatusBadRequest,
			body: `{"_status":{"messages":[{"message":"Parameter values count exceeds maximum number allowed: limit count: 101 max: 100"},` +
				`{"message":"Invalid parameter: order"},{"message":"Unknown query parameter: foo"}]}}`},
		{name: "the list with the database down", url: "/api/v1/topics/7/messages", down: true,
			status: http.StatusServiceUnavailable, body: unavailable},
		{name: "a message with the database down", url: "/api/v1/topics/7/messages/1", down: true,
			status: http.StatusServiceUnavailable, body: unavailable},
		{name: "schedules with the database down", url: "/api/v1/schedules", down: true,
			status: http.StatusServiceUnavailable, body: unavailable},
		{name: "topic details with the database down (rest-java's body)", url: "/api/v1/topics/7", down: true,
			status: http.StatusServiceUnavailable,
			body:   `{"_status":{"messages":[{"message":"Service Unavailable","detail":""}]}}`},
	}
	up, down := serve(testLedger(false)), serve(testLedger(true))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := up
			if tt.down {
				e = down
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.url, nil))
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if diff := cmp.Diff(tt.body, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Link"); got != tt.link {
				t.Errorf("Link %q, want %q", got, tt.link)
			}
		})
	}
}
