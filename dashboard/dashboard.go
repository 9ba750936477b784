// Package dashboard serves a small topic dashboard at /dashboard: one page,
// its script and stylesheet, and the uPlot charting library, all embedded in
// the binary (no CDN, no build step), so it works offline. The page uses
// nothing but the public GraphQL API: queries over HTTP, its live feed as a
// subscription over a WebSocket.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/labstack/echo/v4"

	"mirrorql/graph/explorer"
	"mirrorql/httpserver"
)

// Routes served by Register.
const (
	Route        = "/dashboard"
	AssetsPrefix = Route + "/assets/"
)

// wsClientFile is the graphql-ws browser client (global graphqlWs) that the
// explorer serves below its assets directory: the page loads that copy
// rather than shipping a second one.
const wsClientFile = "graphql-ws.min.js"

//go:embed page.html
var pageSource string

//go:embed assets/*.js assets/*.css assets/*.svg assets/LICENSE.*
var files embed.FS

// Favicon is the service's icon (SVG), the dashboard's favicon.svg: the
// service serves it at /favicon.ico as well, for every page of its own.
//
//go:embed assets/favicon.svg
var Favicon []byte

// asset is an embedded file ready to serve.
type asset struct {
	body        []byte
	contentType string
	version     string // the first 12 hex digits of its sha256
}

// Register mounts the page at Route and Route+"/" and the assets below
// AssetsPrefix (GET and HEAD). graphQL is the path of the GraphQL endpoint
// (graph.Endpoint): the page queries it, subscribes over a WebSocket to it,
// and loads the graphql-ws client from the explorer's assets below it. An
// unknown asset answers the service's 404 (echo.ErrNotFound).
func Register(e *echo.Echo, graphQL string) {
	assets := loadAssets()
	html := renderPage(graphQL, assets)
	methods := []string{http.MethodGet, http.MethodHead}
	servePage := func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", contentSecurityPolicy(c.Request().Host))
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(c.Response(), c.Request(), "dashboard.html", time.Time{}, bytes.NewReader(html))
		return nil
	}
	e.Match(methods, Route, servePage)
	e.Match(methods, Route+"/", servePage)
	e.Match(methods, AssetsPrefix+"*", func(c echo.Context) error {
		a, ok := assets[c.Param("*")]
		if !ok {
			return echo.ErrNotFound
		}
		h := c.Response().Header()
		h.Set("Content-Type", a.contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("ETag", `"`+a.version+`"`)
		// The page asks for ?v=<version>: that URL never changes content,
		// so browsers keep it; any other is revalidated (ETag).
		if c.QueryParam("v") == a.version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(a.body))
		return nil
	})
}

// loadAssets reads every embedded asset, keyed by file name.
func loadAssets() map[string]asset {
	out := map[string]asset{}
	err := fs.WalkDir(files, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "text/plain; charset=utf-8" // the licence files
		}
		out[path.Base(name)] = asset{body: body, contentType: ct, version: hex.EncodeToString(sum[:6])}
		return nil
	})
	if err != nil {
		panic("dashboard: " + err.Error())
	}
	return out
}

// renderPage fills in the page's references: the endpoint, the explorer's
// graphql-ws client, and each asset's URL with its version.
func renderPage(graphQL string, assets map[string]asset) []byte {
	t := template.Must(template.New("page").Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			a, ok := assets[name]
			if !ok {
				return "", fs.ErrNotExist
			}
			return AssetsPrefix + name + "?v=" + a.version, nil
		},
	}).Parse(pageSource))
	var buf bytes.Buffer
	err := t.Execute(&buf, struct{ Endpoint, WSClient string }{
		Endpoint: graphQL,
		WSClient: graphQL + explorer.AssetsDir + wsClientFile,
	})
	if err != nil {
		panic("dashboard: " + err.Error())
	}
	return buf.Bytes()
}

// contentSecurityPolicy holds the page to its own origin (httpserver.SameOriginPolicy):
// its scripts and styles are files of this host (no inline script or style;
// uPlot styles its elements through the DOM, which CSP allows), and it
// connects only to this host, over HTTP for queries and a WebSocket for the
// live feed.
func contentSecurityPolicy(host string) string {
	return httpserver.SameOriginPolicy(host, "img-src 'self'", "style-src 'self'", "script-src 'self'",
		"object-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'")
}
