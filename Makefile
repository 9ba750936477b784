# mirrorql — common tasks. `make help` lists them.

GO           ?= go
BIN          ?= bin/mirrorql
TEST_TIMEOUT ?= 15m
# The end-to-end package on Citus runs longest of all (14 minutes beside three
# other parts, at load 15–25): its hang limit sits further out.
CITUS_E2E_TIMEOUT ?= 25m
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
DB_PKGS    = ./db/... ./tools/pgcluster/... ./tests/testdb/
DB_V2_PKGS = ./db/...
# The Citus run: db and the end-to-end tests (E2E_PKGS).
CITUS_DB_PKGS = ./db/...
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

.PHONY: help build test test-on test-db-on test-v2 test-citus test-chart part-chart part-citus-v2-e2e part-citus-v2-db part-citus-infra run local-network seed docker fuzz conformance bench soak bench-live bench-scale-pair

help: ## list the targets
	@grep -E '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the service into bin/mirrorql
	$(GO) build -o $(BIN) .

# make test runs its parts side by side, TEST_JOBS at a time. One after
# another, they left two fifths of two cores idle (their tests wait on
# servers, outages and timeouts), and one package, the end-to-end tests,
# outlasted the rest of its part while go test started it last; so each
# version's suite is split in two parts, the end-to-end package and every
# other, and the parts start
# longest first (make starts its goals in order; so the parts have no
# prerequisites, which it would start first). Each part's output is printed
# whole when it ends (make -O), with its time; -k runs every part whatever
# another said, so one run reports every failure.
TEST_JOBS ?= 3
GOTEST     = $(GO) test -count=1 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT)
E2E_PKGS   = ./tests/
# Every package of the module but the end-to-end tests; on v2, those of them
# that build databases.
OTHER_PKGS    = $(filter-out mirrorql/tests,$(shell $(GO) list ./...))
OTHER_V2_PKGS = $(filter-out $(E2E_PKGS),$(TESTDB_PKGS))
# A part's server is its name's second word: 15 to 18 (scripts/postgres.sh's
# builds), local (the one on 127.0.0.1:5432, else a throwaway cluster of the
# installed server) or citus (the Citus run, whose parts have rules of their
# own below: it starts its own clusters).
pg_env = $(if $(filter local,$(1)),,bin=$$(scripts/postgres.sh $(1)) || exit 1; export MIRRORQL_POSTGRES_BIN="$$bin";)
on     = $(if $(filter local,$(1)),, on PostgreSQL $(1))
PG_ENV = $(if $(PG),$(call pg_env,$(PG)),)
SERVER = $(or $(PG),local)
# parts SERVERS,PARTS: each server's build made ready (scripts/postgres.sh
# fetches one into .cache/postgres the first time, scripts/citus.sh builds
# Citus), then the parts, side by side.
parts = ( $(foreach s,$(1),$(if $(filter local,$(s)),,$(if $(filter citus,$(s)),($(call timed,Citus 12.1 built and installed,scripts/citus.sh)),scripts/postgres.sh $(s) >/dev/null) &&)) \
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) -O $(2)) || { echo "==> FAILED: the parts above that say FAILED"; false; }
comma := ,

# The order the parts start in, longest first (as measured side by side:
# about 500 s for the first, 300 s to 200 s for the next ten, under 110 s for
# the rest).
TEST_PARTS = part-citus-v2-e2e $(foreach v,$(PG_FULL),part-$(v)-v1-other) \
	$(foreach v,$(PG_FULL),part-$(v)-v1-e2e part-$(v)-v2-e2e) part-citus-v2-db $(foreach v,$(PG_DB),part-$(v)-v1-db) \
	$(foreach v,$(PG_FULL),part-$(v)-v2-other) part-chart $(foreach v,$(PG_DB),part-$(v)-v2-db) part-citus-infra

test: ## the whole suite: vet, every test on both layouts on PostgreSQL 16 and 18, the database packages on 15 and 17, db and the end-to-end tests on Citus, the Helm chart
	$(GO) vet ./...
	@# Compiled once, before the parts would compile them side by side.
	@$(call timed,every test package compiled,$(GO) test -count=1 -exec true ./... >/dev/null)
	@$(call timed,the parts$(comma) $(TEST_JOBS) at a time,$(call parts,$(PG_FULL) $(PG_DB) citus,$(TEST_PARTS)))

# The public mainnet and testnet mirror nodes run the v2 layout
# (topic_message and transaction partitioned by month; tests/testdb,
# docs/reference/v2-layout.md): the database-backed tests once more on it.
test-on: ## every test on one server (PG=16, …; empty: the local one), and the database-backed ones on v2
	@$(call parts,$(SERVER),part-$(SERVER)-v1-other part-$(SERVER)-v1-e2e part-$(SERVER)-v2-e2e part-$(SERVER)-v2-other)

test-v2: ## the database-backed tests again on the v2 layout (MIRRORQL_TEST_LAYOUT=v2; PG as for test-on)
	@$(call parts,$(SERVER),part-$(SERVER)-v2-e2e part-$(SERVER)-v2-other)

test-db-on: ## the database packages on one server (PG=15, …), on both layouts
	@$(call parts,$(SERVER),part-$(SERVER)-v1-db part-$(SERVER)-v2-db)

# The parts (part-SERVER-LAYOUT-PACKAGES; SERVER as pg_env says), run by
# the targets above, which make their servers' builds ready first.
part-%-v1-e2e:
	@$(call timed,end-to-end tests on v1$(call on,$*),$(call pg_env,$*) $(GOTEST) $(E2E_PKGS) -skip '$(CITUS_TESTS)')
part-%-v1-other:
	@$(call timed,every other package on v1$(call on,$*),$(call pg_env,$*) $(GOTEST) $(OTHER_PKGS) -skip '$(CITUS_TESTS)')
part-%-v2-e2e:
	@$(call timed,end-to-end tests on v2$(call on,$*),$(call pg_env,$*) MIRRORQL_TEST_LAYOUT=v2 $(GOTEST) $(E2E_PKGS) -skip '$(V2_SKIP)')
part-%-v2-other:
	@$(call timed,the other database-backed packages on v2$(call on,$*),$(call pg_env,$*) MIRRORQL_TEST_LAYOUT=v2 $(GOTEST) $(OTHER_V2_PKGS) -skip '$(V2_SKIP)')
part-%-v1-db:
	@$(call timed,database packages on v1$(call on,$*),$(call pg_env,$*) $(GOTEST) $(DB_PKGS) -skip '$(CITUS_TESTS)')
part-%-v2-db:
	@$(call timed,database packages on v2$(call on,$*),$(call pg_env,$*) MIRRORQL_TEST_LAYOUT=v2 $(GOTEST) $(DB_V2_PKGS) -skip '$(V2_SKIP)')

# The v2 layout as mainnet and testnet run it: on Citus. testdb's v2-citus is
# a real cluster (a coordinator and two workers of Debian's PostgreSQL 15 with
# Citus 12.1, which scripts/citus.sh builds from third_party/citus once),
# the tables distributed as the importer's v2 migrations distribute them.
# Each of its parts' test processes starts a cluster of its own.
test-citus: ## the database packages and the end-to-end tests on the v2 layout of a real Citus cluster
	@$(call parts,citus,part-citus-v2-e2e part-citus-v2-db part-citus-infra)

part-citus-v2-e2e:
	@$(call timed,end-to-end tests on v2 on Citus,MIRRORQL_TEST_LAYOUT=v2-citus $(GOTEST) -timeout $(CITUS_E2E_TIMEOUT) $(E2E_PKGS) -skip '$(CITUS_SKIP)')
part-citus-v2-db:
	@$(call timed,db on v2 on Citus,MIRRORQL_TEST_LAYOUT=v2-citus $(GOTEST) $(CITUS_DB_PKGS) -skip '$(CITUS_SKIP)')
part-citus-infra:
	@$(call timed,the Citus tests of pgcluster and testdb,MIRRORQL_TEST_LAYOUT=v2-citus $(GOTEST) ./tools/pgcluster ./tests/testdb -run '$(CITUS_INFRA_TESTS)')

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
test-chart: part-chart ## the Helm chart's tests (charts/charttest; needs promtool and PostgreSQL)
part-chart:
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
# The targets are found in the test files' text (a line per package: its
# directory, then its targets), not by `go test -list`, which links every
# package's test binary first.
fuzz: ## run each fuzz target for FUZZTIME (default 10s)
	@set -e; \
	targets=$$(grep -rE --include='*_test.go' --exclude-dir=charts --exclude-dir=third_party --exclude-dir=.cache -o '^func Fuzz[A-Za-z0-9_]*\(' . | \
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$#\1 \2#' | sort | \
		awk '$$1 != pkg { if (pkg != "") print pkg names; pkg = $$1; names = "" } { names = names " " $$2 } END { if (pkg != "") print pkg names }'); \
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
bench: build ## benchmark suite (~13 min, not in `make test`): figures into BENCHMARKS.md
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
bench-scale-pair: build ## v2 against v1 on the same 2M messages, the layout's floor (the routes', and the point lookups' at batches of 1, 4 and 8) and each route's locks (~12-14 min; PG=16|17|18 for that server; not in `make test`): figures into BENCHMARKS.md
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
