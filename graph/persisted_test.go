package graph_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"mirrorql/graph"
)

// TestPersistedQueries: Apollo's automatic persisted queries. A hash the
// server has not seen asks for the query (PERSISTED_QUERY_NOT_FOUND); sent
// with its query once, the hash alone answers after, by POST and by GET.
func TestPersistedQueries(t *testing.T) {
	t.Parallel()
	h := newViewPair(viewRows()).views
	query := `{ topicMessage(topicId: "7", sequenceNumber: 1) { sequenceNumber message } }`
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	postExt := func(body map[string]any) string {
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, graph.Endpoint, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return fmt.Sprintf("%d %s", w.Code, w.Body.Bytes())
	}
	want := `200 {"data":{"topicMessage":{"sequenceNumber":1,"message":"cGxhaW4="}}}`
	if got := postExt(map[string]any{"extensions": ext}); !strings.Contains(got, "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("an unknown hash: %s", got)
	}
	if got := postExt(map[string]any{"query": query, "extensions": ext}); got != want {
		t.Errorf("the query with its hash: %s, want %s", got, want)
	}
	if got := postExt(map[string]any{"extensions": ext}); got != want {
		t.Errorf("the hash alone: %s, want %s", got, want)
	}
	extJSON, _ := json.Marshal(ext)
	req := httptest.NewRequest(http.MethodGet, graph.Endpoint+"?extensions="+url.QueryEscape(string(extJSON)), nil)
	req.Header.Set("Accept", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if got := fmt.Sprintf("%d %s", w.Code, w.Body.Bytes()); got != want {
		t.Errorf("GET with the hash alone: %s, want %s", got, want)
	}
	wrong := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("0", 64)}}
	if got := postExt(map[string]any{"query": query, "extensions": wrong}); !strings.Contains(got, "provided APQ hash does not match query") {
		t.Errorf("a hash that is not the query's: %s", got)
	}
}
