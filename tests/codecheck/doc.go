// Package codecheck holds the suite's checks of the code and the docs
// themselves, which read source files rather than a database: the import
// boundaries, SQL safety and partition names (go/packages and go/ast), the
// Makefile's list of layout tests, the reference copies and citations. A
// package of its own, so that they run once per `go test ./...`, not in
// every database run of make test.
package codecheck
