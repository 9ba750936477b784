// Package app is the core between the faces (rest, graph, live's streams)
// and the query layer. It is the only door to the data: it declares what it
// reads (Store, LiveStore, in its own types; package db answers in them) and
// what it adds to those reads (the Ledger's methods); a face holds the
// Ledger, and asks its Store directly where app adds nothing. It holds the rules the faces must apply the
// same way, once: the operator's settings (Rules: page sizes, the shard and
// realm of short ids), the error vocabulary, the topic id's two steps, where
// the next page starts and whether one exists (the lookahead), and the
// parsing of list filters from what a face received (name, operator, raw
// value). A face parses only its own syntax, hands the values to app, calls
// a reader and renders what comes back; it maps app's errors to its wire
// format in one place. Its tests ask the Ledger over app/memstore, an
// in-memory Store that answers as the query layer does.
package app
