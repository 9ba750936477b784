#!/bin/sh
# Generates ../mirrorpb from the vendored .proto files (PROVENANCE.md); run
# by `go generate ./consensus`. The files name no Go package: every one is
# mapped to mirrorpb.
set -e
cd "$(dirname "$0")/.."
files="consensus_service.proto mirror_network_service.proto basic_types.proto timestamp.proto consensus_submit_message.proto"
opts=""
for f in $files; do
	opts="$opts --go_opt=M$f=mirrorql/consensus/mirrorpb --connect-go_opt=M$f=mirrorql/consensus/mirrorpb"
done
# shellcheck disable=SC2086 # opts and files are lists of words
protoc -I proto/mirror -I proto/services \
	--go_out=. --go_opt=module=mirrorql/consensus \
	--connect-go_out=. --connect-go_opt=module=mirrorql/consensus \
	$opts $files
