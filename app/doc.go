// Package app is the application layer between the two faces (rest, graph)
// and the query layer (db). It holds the rules both faces must apply the
// same way, once: the error vocabulary and the mapping of query-layer
// failures to it, page sizes, where the next page starts, and the questions
// the faces ask, declared as Reader. A face parses its input into app's
// queries, calls a Reader and renders what comes back; it maps app's errors
// to its wire format in one place.
package app
