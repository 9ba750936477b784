package consensus

// The messages and the service stubs from the vendored .proto files
// (proto/PROVENANCE.md), committed. Needs protoc (Debian's
// protobuf-compiler) and the pinned plugins on PATH:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1
//
//go:generate sh proto/generate.sh
