#!/bin/sh
# Rebuilds ../follow.js from follow.mjs (not part of the tests, which load
# the committed bundle): the npm packages of package.json, the ES code of
# the service's .proto files by protoc-gen-es, one minified IIFE by esbuild.
set -e
cd "$(dirname "$0")"
npm install --no-audit --no-fund
P=../../../../consensus/proto
protoc -I $P/mirror -I $P/services --plugin=protoc-gen-es=node_modules/.bin/protoc-gen-es \
	--es_out=gen --es_opt=target=js \
	consensus_service.proto basic_types.proto timestamp.proto consensus_submit_message.proto
./node_modules/.bin/esbuild follow.mjs --bundle --format=iife --minify --legal-comments=eof \
	--target=es2020 --outfile=../follow.js
