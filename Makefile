# mirrorql — common tasks. `make help` lists them.

GO           ?= go
BIN          ?= bin/mirrorql
TEST_TIMEOUT ?= 15m
# Tests run side by side within a package (t.Parallel) up to this many: the
# end-to-end ones mostly wait on processes, outages and timeouts, so more of
# them than CPUs (go test's default) keeps the machine busy.
TEST_PARALLEL ?= 6
FUZZTIME     ?= 10s
# The packages whose tests build databases with tests/testdb (they import
# it): test-v2 runs them again on the mirror node's v2 layout. charttest is a
# module of its own (test-chart runs it).
TESTDB_PKGS   = $(sort $(dir $(shell grep -rlE --include='*_test.go' --exclude-dir=charttest '^\s*(testdb )?"mirrorql/tests/testdb"$$' .)))
SOAK_DURATION ?= 10m
# PG chooses the PostgreSQL server of test-on, test-db-on and the benchmarks:
# empty, the one on 127.0.0.1:5432 (else a throwaway cluster of the installed
# server); 15, 16, 17 or 18, throwaway clusters of that version
# (scripts/postgres.sh gets 16–18 into .cache/postgres, 15 is Debian's).
# MIRRORQL_TEST_DATABASE_URL still points the tests at any given server.
PG ?=
PG_ENV = $(if $(PG),bin=$$(scripts/postgres.sh $(PG)) || exit 1; export MIRRORQL_POSTGRES_BIN="$$bin";,)
# The versions `make test` runs on: the whole suite on what mirror nodes
# run (16) and are moving to (18); the database-backed packages on Debian's
# 15 (what `make run` finds on a bare Debian) and on 17 (the v1 chart's).
PG_FULL ?= 16 18
PG_DB   ?= 15 17
# The database packages on the versions make test runs the rest on once
# (test-db-on): db, with the throwaway clusters and the test databases
# (pgcluster's and testdb's own tests, about no layout or asking for
# theirs, in the v1 run); on v2, db. The end-to-end tests read the
# database through db's statements alone, which these runs hold on every
# version; they run on 16 and 18 (test-on) and on the Citus cluster, whose
# servers are Debian's 15 (test-citus).
DB_PKGS    = ./db/... ./pgcluster/... ./tests/testdb/
DB_V2_PKGS = ./db/...
# The Citus run: db and the end-to-end tests.
CITUS_PKGS = ./db/... ./tests/
# The tests of a Citus cluster, which they start themselves on Debian's
# PostgreSQL 15 whatever PG says: test-citus runs them, the other parts
# leave them to it (-skip) rather than start a cluster each.
CITUS_TESTS = ^(TestCitus|TestCitusPlans|TestCitusDistribution)$$
# The tests that build the layouts they are about (testdb.NewLayout), not the
# run's (testdb.New): the same test whatever MIRRORQL_TEST_LAYOUT says, so
# the v1 run holds them and the v2 and Citus runs leave them out (-skip).
# TestLayoutVariants' variants are the run's own on Citus: test-citus runs it.
LAYOUT_TESTS = TestV2DefaultPartitionEqualsV1 TestTopicMapBytes TestV2ActivityAfterReset TestV2InconsistentLookup \
	TestV2LivePollByName TestV2ReadsEqualV1 TestV2RunAfterReset TestV2WithoutLookupEqualsV1 TestLivePollPlans \
	TestV2LivePollPlans TestBatchQueriesUseIndexes TestChunkWindow TestMessagesOfTopicFilters TestLearnLayoutKeepsCatalog \
	TestV2PartitionsScanned TestV2StatementsCitusCanRun TestMigrateKeepsV2 TestPointLookupsCoalesced
space := $() $()
anyof = ^($(subst $(space),|,$(strip $(1))))$$
V2_SKIP    = $(call anyof,$(LAYOUT_TESTS) TestLayoutVariants TestCitus TestCitusPlans TestCitusDistribution)
CITUS_SKIP = $(call anyof,$(LAYOUT_TESTS))
# timed NAME CMD… runs a part of the suite and says how long it took.
timed = start=$$(date +%s); echo "==> $(1)"; $(2); rc=$$?; echo "==> $(1): $$(( $$(date +%s) - start ))s$$( [ $$rc = 0 ] || echo ", FAILED" )"; exit $$rc

.PHONY: help build test test-on test-db-on test-v2 test-citus test-chart run local-network seed docker fuzz conformance bench soak bench-live bench-scale-pair

help: ## list the targets
	@grep -E '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the service into bin/mirrorql
	$(GO) build -o $(BIN) .

test: ## the whole suite: vet, every test on both layouts on PostgreSQL 16 and 18, the database packages on 15 and 17, db and the end-to-end tests on Citus, the Helm chart
	$(GO) vet ./...
	@failed=""; \
	for v in $(PG_FULL); do $(MAKE) --no-print-directory test-on PG=$$v || failed="$$failed test-on:PG=$$v"; done; \
	for v in $(PG_DB); do $(MAKE) --no-print-directory test-db-on PG=$$v || failed="$$failed test-db-on:PG=$$v"; done; \
	$(MAKE) --no-print-directory test-citus || failed="$$failed test-citus"; \
	$(MAKE) --no-print-directory test-chart || failed="$$failed test-chart"; \
	if [ -n "$$failed" ]; then echo "==> make test FAILED in:$$failed"; exit 1; fi

# The public mainnet and testnet mirror nodes run the v2 layout
# (topic_message and transaction partitioned by month; tests/testdb,
# docs/reference/v2-layout.md): the database-backed tests once more on it.
# Each part runs whatever the one before it said, so that one run reports
# every failure.
test-on: ## every test on one server (PG=16, …; empty: the local one), then the database-backed ones on v2
	@status=0; ($(call timed,all tests on v1$(if $(PG), on PostgreSQL $(PG)),$(PG_ENV) $(GO) test ./... -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(CITUS_TESTS)')) || status=1; \
	$(MAKE) --no-print-directory test-v2 || status=1; exit $$status

test-v2: ## the database-backed tests again on the v2 layout (MIRRORQL_TEST_LAYOUT=v2; PG as for test-on)
	@$(call timed,database-backed tests on v2$(if $(PG), on PostgreSQL $(PG)),$(PG_ENV) MIRRORQL_TEST_LAYOUT=v2 $(GO) test $(TESTDB_PKGS) -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(V2_SKIP)')

test-db-on: ## the database packages on one server (PG=15, …), on both layouts
	@status=0; ($(call timed,database packages on v1$(if $(PG), on PostgreSQL $(PG)),$(PG_ENV) $(GO) test $(DB_PKGS) -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(CITUS_TESTS)')) || status=1; \
	($(call timed,database packages on v2$(if $(PG), on PostgreSQL $(PG)),$(PG_ENV) MIRRORQL_TEST_LAYOUT=v2 $(GO) test $(DB_V2_PKGS) -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(V2_SKIP)')) || status=1; \
	exit $$status

# The v2 layout as mainnet and testnet run it: on Citus. testdb's v2-citus is
# a real cluster (a coordinator and two workers of Debian's PostgreSQL 15 with
# Citus 12.1, which scripts/citus.sh builds from third_party/citus once),
# the tables distributed as the importer's v2 migrations distribute them.
test-citus: ## the database packages and the end-to-end tests on the v2 layout of a real Citus cluster
	@($(call timed,Citus 12.1 built and installed,scripts/citus.sh)) && \
	($(call timed,db and end-to-end tests on v2 on Citus,MIRRORQL_TEST_LAYOUT=v2-citus $(GO) test $(CITUS_PKGS) -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -skip '$(CITUS_SKIP)')) && \
	($(call timed,the Citus tests of pgcluster and testdb,MIRRORQL_TEST_LAYOUT=v2-citus $(GO) test ./pgcluster ./tests/testdb -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -run '$(CITUS_INFRA_TESTS)'))

# In test-citus, pgcluster's and testdb's tests of the Citus run: the
# cluster and the variant (their other tests are about no layout, or ask
# for theirs, and v1's runs hold them). go test splits -run at each slash:
# the second part picks TestVariants' Citus subtest.
CITUS_INFRA_TESTS = ^(TestCitus|TestCitusDistribution|TestVariants|TestNewRecent)$$/^v2-citus$$

# The Helm chart charts/mirrorql, checked by its own module charts/charttest
# (Helm and the Kubernetes API types stay out of the service's go.mod): helm
# lint and template through Helm's Go packages, every object decoded strictly,
# the route table, promtool (Debian's prometheus package; under CI=true a
# missing promtool fails) and the metrics of a running mirrorql.
test-chart: ## the Helm chart's tests (charts/charttest; needs promtool and PostgreSQL)
	@$(call timed,Helm chart tests,cd charts/charttest && $(GO) vet ./... && $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT))

run: build ## run the demo: a throwaway database with sample data, and the service on it (DEMOFLAGS="-layout v2": the v2 layout)
	@exec $(BIN) demo $(DEMOFLAGS)

local-network: build ## serve the mirror node database of a local Hiero network on this machine, read-only (docs/running.md)
	@exec $(BIN) local-network

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
	done; \
	echo "== charts/charttest FuzzTraefikClaims ($(FUZZTIME))"; \
	cd charts/charttest && $(GO) test . -run '^$$' -fuzz '^FuzzTraefikClaims$$' -fuzztime $(FUZZTIME)

conformance: build ## replay the conformance cases (tests/testdata/conformance, a copy of shared/) against the built service
	$(GO) test ./tests -run 'TestREST/conformance' -count=1 -v -timeout $(TEST_TIMEOUT)

# Not part of `make test` (which replays the recorded cases without Node):
# records them anew against the mirror node's own REST server, already
# running on the database RESTDIFF_DB (docs/rest.md, "Conformance");
# RESTDIFF_LAYOUT=v2 for a v2 database and a server in its lookup mode.
RESTDIFF_LAYOUT ?= v1
.PHONY: restdiff
restdiff: build ## record the differential cases against the mirror node's REST server (NODE=http://host:port, RESTDIFF_DB=the database it reads, RESTDIFF_LAYOUT=v1|v2)
	@test -n "$(NODE)" -a -n "$(RESTDIFF_DB)" || { echo "usage: make restdiff NODE=http://127.0.0.1:5551 RESTDIFF_DB=postgres://… [RESTDIFF_LAYOUT=v2]"; exit 2; }
	$(GO) run ./tests/cmd/restdiff -node $(NODE) -db $(RESTDIFF_DB) -layout $(RESTDIFF_LAYOUT) -bin $(BIN) \
		-out tests/testdata/restdiff/cases-$(RESTDIFF_LAYOUT).jsonl $(RESTDIFFFLAGS)

# Not part of `make test`: creates the databases mirrorql_bench and
# mirrorql_bench_small on the local server (or a throwaway cluster), seeds them,
# drives every route with bench/loadgen next to a pgbench floor, and rewrites
# the generated section of BENCHMARKS.md. BENCHFLAGS passes flags through
# (go run ./bench/cmd/bench -h lists them), e.g. BENCHFLAGS=-reuse.
bench: build ## benchmark suite (~8.5 min, not in `make test`): figures into BENCHMARKS.md
	$(PG_ENV) $(GO) run ./bench/cmd/bench -bin $(BIN) $(BENCHFLAGS)

# Not part of `make test` either: one `mirrorql serve` on the bench database
# (seeded as `make bench` does unless an earlier run left it), mixed REST and
# GraphQL routes at saturation for SOAK_DURATION, sampled every 10 s; the
# verdict (no errors, RSS and goroutines flat, connections within the pool)
# and the figures go into the soak section of BENCHMARKS.md. SOAKFLAGS passes
# flags through (e.g. SOAKFLAGS='-soak-data small -conns 64').
soak: build ## soak benchmark (SOAK_DURATION, default 10m; not in `make test`): figures into BENCHMARKS.md
	$(PG_ENV) $(GO) run ./bench/cmd/bench -bin $(BIN) -soak $(SOAK_DURATION) $(SOAKFLAGS)

# Not part of `make test` either: live topic messages (GraphQL subscriptions
# over WebSocket) against one `mirrorql serve` at a time on its own database
# mirrorql_bench_live (re-created with the small seed each run), a writer
# appending messages as the importer does: latency from COMMIT to delivery
# (the poller alone, then with the Redis wake-up when 127.0.0.1:6379
# answers), fan-out to 1,000 subscribers, poll statements at 1 and 1,000
# subscribers, memory per idle subscription at 1,000 and 5,000, then the gRPC
# face: its latency beside a WebSocket's on the same topic, memory per idle
# gRPC stream at 1,000 and 5,000, 1,000 gRPC subscribers, and poll
# statements at 1 and at 1,000 subscribers split across both faces
# (-live-grpc=false leaves it out). Figures into
# the live section of BENCHMARKS.md. LIVEFLAGS passes flags through (the
# -live-* flags of go run ./bench/cmd/bench -h).
bench-live: build ## live subscriptions benchmark (~6 min, not in `make test`): figures into BENCHMARKS.md
	$(PG_ENV) $(GO) run ./bench/cmd/bench -bin $(BIN) -live $(LIVEFLAGS)

# Not part of `make test` (nor CI): the mainnet-shaped benchmark. Loads, or
# keeps when their markers match, the databases mirrorql_scale_*: v1 and v2
# layouts of 50,000,000 messages over 10,000 topics (about 29 GB each; the
# run checks the free disk first and refuses when short) and v2 data sets of
# 2,000,000 messages at 10, 88 and 200 monthly partitions; then drives the
# message routes on them next to the 1,000,000-message v1 data set of
# `make bench` (mirrorql_bench, kept as -reuse keeps it). Figures into
# bench/results/scale.md and the scale section of BENCHMARKS.md. SCALEFLAGS
# passes flags through, e.g. SCALEFLAGS=-scale-messages=2000000 for a quick run.
.PHONY: bench-scale
bench-scale: build ## mainnet-shaped benchmark (50M messages in v1 and v2; first load ~16 min, then ~15 min; not in `make test`): figures into BENCHMARKS.md
	$(PG_ENV) $(GO) run ./bench/cmd/bench -bin $(BIN) -scale $(SCALEFLAGS)

# The same messages in both layouts (2M by default), served side by side:
# every route's v2 rate over its v1 rate, and the answers compared.
# Then the layout's floor: the rows of the routes that read many v2 partitions, read
# by pgbench alone with the cheapest statement there is (bench/cmd/bench/scale_floor.go).
# PG=16|17|18 runs it on a throwaway cluster of that version (as every bench
# target), SCALEFLAGS='-pg-set max_locks_per_transaction=256' with that
# server setting (repeatable; implies a throwaway cluster).
bench-scale-pair: build ## v2 against v1 on the same 2M messages, the layout's floor and each route's locks (~8-10 min; PG=16|17|18 for that server; not in `make test`): figures into BENCHMARKS.md
	$(PG_ENV) $(GO) run ./bench/cmd/bench -bin $(BIN) -scale -scale-pair -scale-warm 5s -scale-sets v1,v2 -scale-prefix mirrorql_same -scale-messages 2000000 $(SCALEFLAGS)

# Not part of `make test` (nor CI): the v2 layout on a Citus cluster beside
# plain v2 on the same messages (2M by default). Needs Citus installed
# (scripts/citus.sh); starts its own servers, Debian's PostgreSQL 15 (the
# build Citus is installed into) for both: a plain one, and a coordinator
# with two workers, the tables distributed in 16 shards as on mainnet. Every
# message route on a service of each in alternating pairs, the answers
# compared, each route's statements and Citus tasks, the live poll at 1 and
# 1,000 subscribers on each. Figures into bench/results/citus.md and the
# citus section of BENCHMARKS.md. CITUSFLAGS passes flags through (the
# -citus-* and -live-* flags of go run ./bench/cmd/bench -h), e.g.
# CITUSFLAGS='-citus-messages 500000 -citus-live=false' for a quick run.
# The live phases' fan-out offers 5 messages/s to 1,000 subscribers (5,000
# deliveries a second; bench-live offers 20), so that on shared cores it
# measures the poll on each database rather than the machine's limit.
CITUS_LIVEFLAGS ?= -live-fanout-rate 5 -live-window 15s -live-latency 15s
.PHONY: bench-citus
bench-citus: build ## Citus beside plain v2 on the same 2M messages: rates, tasks per request, live poll (~15 min; needs scripts/citus.sh; not in `make test`): figures into BENCHMARKS.md
	$(GO) run ./bench/cmd/bench -bin $(BIN) -citus $(CITUS_LIVEFLAGS) $(CITUSFLAGS)
