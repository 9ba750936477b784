# mirrorql — common tasks. `make help` lists them.

GO           ?= go
BIN          ?= bin/mirrorql
TEST_TIMEOUT ?= 15m
# Tests run side by side within a package (t.Parallel) up to this many: the
# end-to-end ones mostly wait on processes, outages and timeouts, so more of
# them than CPUs (go test's default) keeps the machine busy.
TEST_PARALLEL ?= 6
FUZZTIME     ?= 10s
SOAK_DURATION ?= 10m

.PHONY: help build test run seed docker fuzz conformance bench soak bench-live

help: ## list the targets
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the service into bin/mirrorql
	$(GO) build -o $(BIN) .

test: ## vet, then every test (integration tests need PostgreSQL: see tests/testdb)
	$(GO) vet ./...
	$(GO) test ./... -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT)

run: build ## run the demo: a throwaway database with sample data, and the service on it
	@exec $(BIN) demo

seed: build ## migrate MIRRORQL_DATABASE_URL and write the data set (SEEDFLAGS="-h" lists the size flags)
	$(BIN) seed $(SEEDFLAGS)

docker: ## build the container image mirrorql:local (needs a Docker engine)
	docker build -t mirrorql:local .

# Every Fuzz* target of every package, one after the other, FUZZTIME each
# (a duration, 30s, or a count of inputs, 50000x; CI uses a count, see .ci/run).
# `go test -list` prints a package's matching names, then its "ok <package>" line.
fuzz: ## run each fuzz target for FUZZTIME (default 10s)
	@set -e; \
	targets=$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { names = names " " $$1 } /^ok / { if (names != "") print $$2 names; names = "" }'); \
	if [ -z "$$targets" ]; then echo "no fuzz targets"; exit 0; fi; \
	echo "$$targets" | while read -r pkg names; do \
		for name in $$names; do \
			echo "== $$pkg $$name ($(FUZZTIME))"; \
			$(GO) test "$$pkg" -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); \
		done; \
	done

conformance: build ## replay the conformance cases (tests/testdata/conformance, a copy of shared/) against the built service
	$(GO) test ./tests -run 'TestREST/conformance' -count=1 -v -timeout $(TEST_TIMEOUT)

# Not part of `make test`: creates the databases mirrorql_bench and
# mirrorql_bench_small on the local server (or a throwaway cluster), seeds them,
# drives every route with bench/loadgen next to a pgbench floor, and rewrites
# the generated section of BENCHMARKS.md. BENCHFLAGS passes flags through
# (go run ./bench/cmd/bench -h lists them), e.g. BENCHFLAGS=-reuse.
bench: build ## benchmark suite (~8.5 min, not in `make test`): figures into BENCHMARKS.md
	$(GO) run ./bench/cmd/bench -bin $(BIN) $(BENCHFLAGS)

# Not part of `make test` either: one `mirrorql serve` on the bench database
# (seeded as `make bench` does unless an earlier run left it), mixed REST and
# GraphQL routes at saturation for SOAK_DURATION, sampled every 10 s; the
# verdict (no errors, RSS and goroutines flat, connections within the pool)
# and the figures go into the soak section of BENCHMARKS.md. SOAKFLAGS passes
# flags through (e.g. SOAKFLAGS='-soak-data small -conns 64').
soak: build ## soak benchmark (SOAK_DURATION, default 10m; not in `make test`): figures into BENCHMARKS.md
	$(GO) run ./bench/cmd/bench -bin $(BIN) -soak $(SOAK_DURATION) $(SOAKFLAGS)

# Not part of `make test` either: live topic messages (GraphQL subscriptions
# over WebSocket) against one `mirrorql serve` at a time on its own database
# mirrorql_bench_live (re-created with the small seed each run), a writer
# appending messages as the importer does: latency from COMMIT to delivery
# (the poller alone, then with the Redis wake-up when 127.0.0.1:6379
# answers), fan-out to 1,000 subscribers, poll statements at 1 and 1,000
# subscribers, memory per idle subscription at 1,000 and 5,000. Figures into
# the live section of BENCHMARKS.md. LIVEFLAGS passes flags through (the
# -live-* flags of go run ./bench/cmd/bench -h).
bench-live: build ## live subscriptions benchmark (~4 min, not in `make test`): figures into BENCHMARKS.md
	$(GO) run ./bench/cmd/bench -bin $(BIN) -live $(LIVEFLAGS)
