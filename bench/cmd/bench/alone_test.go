package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestAloneRepeatsTheRecordedResponse(t *testing.T) {
	body := []byte(`{"topic_id":"0.0.2001","sequence_number":7}`)
	// The service's response, recorded.
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/topics/0.0.2001/messages/7" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Etag", `W/"2b-abc"`)
		w.Header().Set("Cache-Control", "public, max-age=600")
		_, _ = w.Write(body)
	}))
	defer svc.Close()
	s := &service{host: strings.TrimPrefix(svc.URL, "http://")}
	file, err := recordResponse(t.Context(), s, "/api/v1/topics/0.0.2001/messages/7")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(file) })
	if _, err := recordResponse(t.Context(), s, "/nothing"); err == nil {
		t.Fatal("a 404 was recorded")
	}

	// The alone server's answer to any request.
	rec, err := readRecorded(file)
	if err != nil {
		t.Fatal(err)
	}
	alone := httptest.NewServer(aloneHandler(rec))
	defer alone.Close()
	for _, path := range []string{"/api/v1/topics/0.0.2001/messages/123", "/health/readiness"} {
		resp, err := http.Get(alone.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != string(body) {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, got)
		}
		for _, h := range []string{"Content-Type", "Etag", "Cache-Control", "Content-Length"} {
			if resp.Header.Get(h) == "" || resp.Header.Get(h) != rec.Header.Get(h) {
				t.Errorf("%s: %s %q, recorded %q", path, h, resp.Header.Get(h), rec.Header.Get(h))
			}
		}
		if len(rec.Header.Values("Date")) != 0 || len(resp.Header.Values("Date")) != 1 {
			t.Errorf("Date: recorded %q, sent %q", rec.Header.Values("Date"), resp.Header.Values("Date"))
		}
	}
}

func TestReferenceRowsHaveNoVerdict(t *testing.T) {
	rounds := []round{{floor: floor{tps: 20_000}, rows: []measurement{
		{route: route{name: aloneRoute}, rps: 40_000, p99: 6 * time.Millisecond},
		{route: route{name: "by-sequence"}, rps: 10_000, p99: 6 * time.Millisecond},
	}}}
	for _, tc := range []struct{ title, median, verdict string }{
		{"REST by sequence p99 ≤ 5 ms", "6.00 ms", "**not met**"},
		{"(reference, no target) HTTP alone p99: no database, no handler", "6.00 ms", "reference"},
		{"(reference, no target) REST by sequence ÷ HTTP alone", "0.250", "reference"},
	} {
		var found bool
		for _, tg := range ratioTargets {
			if tg.title != tc.title {
				continue
			}
			found = true
			median, _, met, ok := tg.judge(rounds)
			if !ok || median != tc.median || tg.verdict(met) != tc.verdict {
				t.Errorf("%s: %q %v %q", tc.title, median, ok, tg.verdict(met))
			}
		}
		if !found {
			t.Errorf("no target %q", tc.title)
		}
	}
}
