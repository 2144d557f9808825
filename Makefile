# Flowstate build. `make run` builds everything and runs the bundled word count job;
# `make test` runs the whole test suite (what CI runs).
GO      ?= go
BIN     := $(CURDIR)/bin
PLUGINS := hashmap leveldb disaggregated jmstorage fsstorage
export FLOWSTATE_BIN := $(BIN)

.PHONY: all build runner plugins run test test-busy vet fmt-check lint tools proto clean bench fuzz soak

all: build

build: runner plugins

runner:
	$(GO) build -o $(BIN)/runner ./cmd/runner

# The third-party example plugin (examples/thirdparty) is built from its own module, as a
# real one would be, into the same plugin directory.
plugins:
	@mkdir -p $(BIN)/plugins
	@for p in $(PLUGINS); do \
		echo "$(GO) build -o $(BIN)/plugins/flowstate-plugin-$$p ./plugins/$$p"; \
		$(GO) build -o $(BIN)/plugins/flowstate-plugin-$$p ./plugins/$$p || exit 1; \
	done
	$(GO) -C examples/thirdparty build -o $(BIN)/plugins/flowstate-plugin-boltdb .

run: build
	rm -rf out/wordcount
	$(BIN)/runner run --config examples/wordcount/config.yaml

# The SDK (sdk/) is a Go module of its own: ./... of the root module does not reach it.
vet:
	$(GO) vet ./...
	$(GO) -C sdk vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# staticcheck and deadcode at pinned versions, installed once into .tools/ from the Go module
# proxy. deadcode -test reports a function no main, test or benchmark of the module reaches:
# public API that nothing uses or tests. The root module's report leaves out the SDK, which
# its own module's report covers.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := golang.org/x/tools/cmd/deadcode@v0.52.0
TOOLS       := $(CURDIR)/.tools
tools:
	@test -x $(TOOLS)/staticcheck || GOBIN=$(TOOLS) $(GO) install $(STATICCHECK)
	@test -x $(TOOLS)/deadcode || GOBIN=$(TOOLS) $(GO) install $(DEADCODE)

lint: tools
	$(TOOLS)/staticcheck ./...
	cd sdk && $(TOOLS)/staticcheck ./...
	cd examples/thirdparty && $(TOOLS)/staticcheck ./...
	@out=$$($(TOOLS)/deadcode -test -filter '^github.com/flowstate/flowstate/(cmd|runtime|plugins|internal|examples)/' ./...) && \
	out="$$out$$(cd sdk && $(TOOLS)/deadcode -test ./...)" && \
	if [ -n "$$out" ]; then echo "deadcode: unreachable code:"; echo "$$out"; exit 1; fi; echo "deadcode: none"

# The S3 tests run against a real S3-compatible server that scripts/with-s3.sh builds (once,
# cached outside the repository) and starts on 127.0.0.1 for the duration of the tests; the
# JetStream tests start their own nats-server processes (internal/natstest) from the binary
# scripts/with-nats.sh builds (once, cached) and names in FLOWSTATE_NATS_SERVER. The
# root module and the SDK's run under the race detector; the long end-to-end tests, which
# mostly wait on rate-limited jobs, run three at a time (-parallel 3). internal/deps fails on
# any import that crosses the parts' boundaries.
test: build fmt-check vet lint
	./scripts/with-s3.sh ./scripts/with-nats.sh $(GO) test -race -count=1 -parallel 3 -timeout 25m ./...
	$(GO) -C sdk test -race -count=1 -timeout 10m ./...
	$(MAKE) --no-print-directory fuzz
	$(GO) -C examples/thirdparty vet ./...
	$(GO) -C examples/thirdparty test -count=1 -timeout 10m ./...

# `make test` three times in a row with two CPU-bound processes alongside (a busy machine):
# the suite must not depend on timing that load can stretch. About 30 minutes on 2 cores.
test-busy:
	./scripts/test-busy.sh 3

# Benchmarks of issue 7 (plugins against the same plugins in-process, and against the
# disk): about 3 minutes on a quiet 2-core machine (2m45s-3m06s in four runs this round);
# writes docs/performance.md.
# The jetstream phase (issue 26) measures nats.go alone on a nats-server it starts, from the
# binary scripts/with-nats.sh builds (once, cached): about 30 s more. The distributed phase
# (issue 27) runs the word count on one runner and on 1, 2 and 3 runners in distributed mode:
# three rounds of 1.5 to 2.5 minutes each on this shared 2-core machine at load 4-7 (4m37s and
# 7m12s alone, -only distributed); after the other phases it adds no round once 3 minutes
# have passed since it began, so about 3 to 5 minutes more. BENCHFLAGS=-quick checks that every
# figure runs, in seconds. The memory phase (issue 24) measures peak RSS at 3M distinct
# keys; BENCHFLAGS='-memory-keys 3000000,30000000' adds 30M (docs/performance.md says how
# long it takes). The disaggregated phase (issue 28) runs the disaggregated backend against
# leveldb on the S3 test server scripts/with-s3.sh builds (once, ~5 minutes) and starts:
# 8-11 minutes more at 1 GiB of state on a busy 2-core machine (8m06s and 11m13s);
# BENCHFLAGS='-disaggregated-gib 1,4' adds 4 GiB (39 minutes more there), 1,4,16 adds
# 16 GiB too (not measured yet: hours).
bench: build
	./scripts/with-s3.sh ./scripts/with-nats.sh $(GO) run ./cmd/flowbench -plugin-dir $(BIN)/plugins -runner $(BIN)/runner -out docs/performance.md $(BENCHFLAGS)

# Fuzz targets with committed seed corpora (testdata/fuzz/), run briefly by `make test` with an
# execution budget per target (a few seconds each). Budgets are counts, not durations: Go 1.26's
# fuzz coordinator can report a spurious "context deadline exceeded" when a -fuzztime duration
# ends while a worker is busy (go.dev/issue/75804, fixed in Go 1.27).
# `make fuzz FUZZTIME=200000x` (or a duration such as 10m) sets one budget for every target.
# A package under sdk/ is fuzzed in the SDK's module, from sdk/.
FUZZ := ./runtime/config:FuzzParse:20000x ./runtime/checkpoint:FuzzDecodeMetadata:20000x \
	./sdk/dirstorage:FuzzResolveCheckpoint:2000x ./sdk/kvstream:FuzzReader:20000x
FUZZTIME ?=
fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${FUZZTIME:-$${rest#*:}}; \
		dir=.; case $$pkg in ./sdk/*) dir=sdk; pkg=./$${pkg#./sdk/};; esac; \
		echo "$(GO) -C $$dir test -run='^$$' -fuzz=^$$name\$$ -fuzztime=$$budget $$pkg"; \
		$(GO) -C $$dir test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$budget $$pkg || exit 1; \
	done

# The long fault runs (docs/reliability.md): 150 random kill -9s per backend and storage in
# the crash loop, the storage fault, corruption and hostile-plugin tests, both modules
# under -race, and 100,000 executions per fuzz target.
soak: build
	FLOWSTATE_SOAK_KILLS=150 ./scripts/with-s3.sh ./scripts/with-nats.sh $(GO) test -race -count=1 -timeout 90m -v \
		-run 'TestCrashLoop|TestCrashRecovery|Storage|OutOfSpace|Damaged|Deadlocked|Hostile|Noisy|Traversal' ./internal/e2e
	./scripts/with-s3.sh ./scripts/with-nats.sh $(GO) test -race -count=1 -timeout 60m ./...
	$(GO) -C sdk test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=100000x

# Regenerate the protocol's Go code from sdk/internal/proto/*.proto.
proto:
	./scripts/genproto.sh

clean:
	rm -rf $(BIN)
