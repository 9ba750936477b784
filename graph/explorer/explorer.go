// Package explorer serves the GraphiQL explorer from assets embedded in the
// binary: no CDN, so it works with no internet access.
package explorer

import (
	"bytes"
	"embed"
	"html/template"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"mirrorql/httpserver"
)

//go:embed assets/*.js assets/*.css assets/LICENSE.* assets/README.md
var assets embed.FS

// AssetsDir is where, below the endpoint, the page loads its assets from.
const AssetsDir = "/explorer/"

var page = template.Must(template.New("explorer").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mirrorql GraphQL explorer</title>
<link rel="stylesheet" href="{{.Assets}}graphiql.min.css">
<style>body{margin:0;height:100vh}#graphiql{height:100vh}</style>
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}" data-default-query="{{.DefaultQuery}}">Loading…</div>
<script src="{{.Assets}}react.production.min.js"></script>
<script src="{{.Assets}}react-dom.production.min.js"></script>
<script src="{{.Assets}}graphiql.min.js"></script>
<script src="{{.Assets}}graphql-ws.min.js"></script>
<script src="{{.Assets}}explorer.js"></script>
</body>
</html>
`))

const defaultQuery = `# mirrorql: topics, topic messages and schedules of the Hiero mirror node.
# Open the docs (the book icon) to browse the schema; run with Ctrl-Enter.
{
  topics(first: 5) {
    nodes {
      id
      memo
      messages(first: 3) {
        nodes { sequenceNumber consensusTimestamp message(encoding: UTF8) }
      }
    }
  }
}
`

// Handler serves the page at any path except those below endpoint+AssetsDir,
// which serve the embedded assets.
func Handler(endpoint string, notFound http.Handler) http.Handler {
	var buf bytes.Buffer
	err := page.Execute(&buf, struct{ Endpoint, Assets, DefaultQuery string }{
		Endpoint: endpoint, Assets: endpoint + AssetsDir, DefaultQuery: defaultQuery,
	})
	if err != nil {
		panic(err)
	}
	html := buf.Bytes()
	started := time.Now()
	prefix := endpoint + AssetsDir
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, isAsset := strings.CutPrefix(r.URL.Path, prefix)
		if !isAsset {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", contentSecurityPolicy(r.Host))
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, "explorer.html", started, bytes.NewReader(html))
			return
		}
		body, err := assets.ReadFile("assets/" + path.Clean("/" + name)[1:])
		if err != nil {
			notFound.ServeHTTP(w, r)
			return
		}
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, name, started, bytes.NewReader(body))
	})
}

// contentSecurityPolicy holds the page to its own origin (httpserver.SameOriginPolicy):
// scripts, styles and fonts come from the embedded assets (inline styles
// too: the page's own and the ones GraphiQL's editors set; graphiql.min.css's
// images and fonts are data: URLs), and it connects only to the endpoint,
// over HTTP for queries and over a WebSocket for subscriptions.
func contentSecurityPolicy(host string) string {
	return httpserver.SameOriginPolicy(host, "img-src 'self' data:", "font-src 'self' data:",
		"style-src 'self' 'unsafe-inline'", "object-src 'none'", "base-uri 'none'")
}

// WantsPage reports whether r is a browser asking for a page: a GET whose
// Accept header lists text/html. GraphQL clients ask for JSON.
func WantsPage(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/html") {
			return true
		}
	}
	return false
}
