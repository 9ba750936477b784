package service

import (
	"testing"

	"mirrorql/app"
	"mirrorql/app/memstore"
	"mirrorql/rest"
)

// TestCachedRoutesHaveVersions: every route the REST table marks cached has
// the read of its data's version, so that the response cache keeps it and
// retires its answers when those tables are reloaded; a route marked with
// data nobody reads a version of would be left uncached.
func TestCachedRoutesHaveVersions(t *testing.T) {
	routes := cachedRoutes(app.New(memstore.New(), app.Rules{}))
	cached := rest.CachedRoutes()
	if len(cached) == 0 {
		t.Fatal("no route is cached: the test checks nothing")
	}
	for path, data := range cached {
		if routes[path] == nil {
			t.Errorf("%s: cached by the version of %q, which cachedRoutes does not read", path, data)
		}
	}
	for _, r := range rest.Routes() {
		if _, ok := routes[r.Path]; ok != (r.Cached != "") {
			t.Errorf("%s: cached %q, in the cache's routes %t", r.Path, r.Cached, ok)
		}
	}
}
