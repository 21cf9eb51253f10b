# bpfmeta: add BPF program metadata (PERF_RECORD_BPF_METADATA) to perf.data.
#
# Most targets need root: the tests load BPF programs and record with perf.

GO       ?= go
BIN      := bin/bpfmeta
FUZZTIME ?= 30s
export PATH := $(PATH):/usr/local/go/bin

.PHONY: help build test deps demo fuzz bench golden vet clean

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/bpfmeta
	$(GO) build -o $(BIN) ./cmd/bpfmeta

test: build ## run every test (as root: loads BPF programs, records with perf 6.1 and perf 7.2)
	./scripts/deps.sh
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race ./reader ./writer

deps: ## install what the tests need, if missing (Debian 12, as root): clang, bpftool, perf 6.1, perf 7.2
	./scripts/deps.sh

demo: build ## load a sample BPF program, record 3 s with the system perf, inject, show the metadata
	./scripts/demo.sh

fuzz: ## run every fuzz target for FUZZTIME (default 30s) each
	./scripts/fuzz.sh $(FUZZTIME)

bench: build ## time inject on a >= 300 MB recording against cp and perf inject, with peak RSS
	./scripts/bench.sh

golden: ## regenerate the golden files (go test ./... -update)
	$(GO) test -count=1 ./... -update

vet: ## go vet and gofmt
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }

clean: ## remove build output
	rm -rf bin
