// Package apidocs serves the REST API's description: Swagger UI from
// embedded swagger-ui-dist assets (no CDN) at /api/v1/docs, reading the
// OpenAPI document at /api/v1/docs/openapi.yml.
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Routes served by Register.
const (
	RoutePage    = "/api/v1/docs"
	RouteSpec    = "/api/v1/docs/openapi.yml"
	RouteAssets  = "/api/v1/docs/assets/*"
	assetsPrefix = "/api/v1/docs/assets/"
)

//go:embed swagger-ui
var files embed.FS

// Assets are the embedded Swagger UI files.
var Assets, _ = fs.Sub(files, "swagger-ui")

// Register mounts the page (with and without a trailing slash), the assets
// and spec, the OpenAPI document in YAML.
func Register(e *echo.Echo, spec []byte) {
	page, err := fs.ReadFile(Assets, "index.html")
	if err != nil {
		panic("apidocs: " + err.Error())
	}
	servePage := func(c echo.Context) error {
		h := c.Response().Header()
		// Everything the page loads comes from here.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
		h.Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, "text/html; charset=utf-8", page)
	}
	e.GET(RoutePage, servePage)
	e.GET(RoutePage+"/", servePage)
	e.GET(RouteSpec, func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, "application/yaml", spec)
	})
	assets := http.StripPrefix(assetsPrefix, http.FileServerFS(Assets))
	e.GET(RouteAssets, func(c echo.Context) error {
		name := c.Param("*")
		if fi, err := fs.Stat(Assets, name); err != nil || fi.IsDir() || name == "index.html" {
			return echo.ErrNotFound // no directory listings; the page has its own route
		}
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		assets.ServeHTTP(c.Response(), c.Request())
		return nil
	})
}
