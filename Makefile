# Flowstate build. `make run` builds everything and runs the bundled word count job;
# `make test` runs the whole test suite (what CI runs).
GO      ?= go
BIN     := $(CURDIR)/bin
PLUGINS := hashmap leveldb jmstorage fsstorage
export FLOWSTATE_BIN := $(BIN)

.PHONY: all build runner plugins run test vet fmt-check proto clean

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

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The S3 tests run against a real S3-compatible server that scripts/with-s3.sh builds (once,
# cached outside the repository) and starts on 127.0.0.1 for the duration of the tests.
test: build fmt-check vet
	./scripts/with-s3.sh $(GO) test -count=1 -timeout 15m ./...
	$(GO) -C examples/thirdparty vet ./...
	$(GO) -C examples/thirdparty test -count=1 -timeout 10m ./...

# Regenerate the protocol's Go code from sdk/internal/proto/*.proto.
proto:
	./scripts/genproto.sh

clean:
	rm -rf $(BIN)
