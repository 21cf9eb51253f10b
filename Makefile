# bpfmeta: add BPF program metadata (PERF_RECORD_BPF_METADATA) to perf.data.
#
# make build   needs Go only; make test, demo and bench need root on Debian 12
# (they load BPF programs and record with perf) and install what they need.

GO       ?= go
BIN      ?= bin/bpfmeta
# make install puts bpfmeta, its man page and its completion scripts under
# $(DESTDIR)$(PREFIX): /usr/local by default, ~/.local for one user. The
# completion scripts go where the machine's shells look by default
# (scripts/completion-dirs.sh: fish 3.6 of Debian 12 does not search
# /usr/local/share, so for the default PREFIX its script goes to /etc/fish),
# and make install prints the line to add for a shell that will not find one.
PREFIX   ?= /usr/local
BINDIR   := $(DESTDIR)$(PREFIX)/bin
MAN1DIR  := $(DESTDIR)$(PREFIX)/share/man/man1
# the README and docs/: -h and the man page refer to docs/json.md
DOCDIR   := $(DESTDIR)$(PREFIX)/share/doc/bpfmeta
DOCS     := $(wildcard docs/*.md)
BASHDIR   = $(DESTDIR)$(shell PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' scripts/completion-dirs.sh dir bash)
ZSHDIR    = $(DESTDIR)$(shell PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' scripts/completion-dirs.sh dir zsh)
FISHDIR   = $(DESTDIR)$(shell PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' scripts/completion-dirs.sh dir fish)
# the journal service, where systemd looks for units under PREFIX
# (/usr/local/lib/systemd/system for the default PREFIX)
UNITDIR  ?= $(PREFIX)/lib/systemd/system
FUZZTIME ?= 30s
export PATH := $(PATH):/usr/local/go/bin

.PHONY: help build install uninstall test cross dist dist-check deps demo fuzz bench soak golden vet man clean

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# urfave_cli_no_docs leaves out urfave/cli's Markdown and man page writers,
# which bpfmeta does not use (it writes its own man page): their Markdown
# library's package initialisation cost every run 3-5 ms of CPU and up to
# 12 ms of wall time before main, a tenth of a whole inject of 300 MB.
build: ## build bin/bpfmeta
	$(GO) build -buildvcs=auto -tags urfave_cli_no_docs -o $(BIN) ./cmd/bpfmeta

install: build ## install bpfmeta, its man page, README and docs/, bash/zsh/fish completion (where the shells look) and bpfmeta-watch.service under PREFIX (default /usr/local)
	install -d $(BINDIR) $(MAN1DIR) $(DOCDIR)/docs $(BASHDIR) $(ZSHDIR) $(FISHDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(BIN) $(BINDIR)/bpfmeta
	install -m 644 README.md $(DOCDIR)/README.md
	install -m 644 $(DOCS) $(DOCDIR)/docs
	sed 's|@BINDIR@|$(PREFIX)/bin|' scripts/bpfmeta-watch.service.in >$(DESTDIR)$(UNITDIR)/bpfmeta-watch.service
	chmod 644 $(DESTDIR)$(UNITDIR)/bpfmeta-watch.service
	$(BIN) man >$(MAN1DIR)/bpfmeta.1
	$(BIN) completion bash >$(BASHDIR)/bpfmeta
	$(BIN) completion zsh >$(ZSHDIR)/_bpfmeta
	$(BIN) completion fish >$(FISHDIR)/bpfmeta.fish
	chmod 644 $(MAN1DIR)/bpfmeta.1 $(BASHDIR)/bpfmeta $(ZSHDIR)/_bpfmeta $(FISHDIR)/bpfmeta.fish
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' scripts/completion-dirs.sh hints
	@# (the PATH make runs with is the caller's, with Go's directory after it)
	@test -n '$(DESTDIR)' || case ":$$PATH:" in *':$(PREFIX)/bin:'*) ;; \
		*) echo 'PATH: $(PREFIX)/bin is not in PATH: add to ~/.profile:  PATH="$(PREFIX)/bin:$$PATH"' ;; esac

uninstall: ## remove what make install installed under PREFIX
	rm -f $(BINDIR)/bpfmeta $(MAN1DIR)/bpfmeta.1 $(DOCDIR)/README.md $(addprefix $(DOCDIR)/,$(DOCS)) $(BASHDIR)/bpfmeta $(ZSHDIR)/_bpfmeta $(FISHDIR)/bpfmeta.fish $(DESTDIR)$(UNITDIR)/bpfmeta-watch.service

test: build deps cross ## every test, none skipped: unit, corpus, golden files, live BPF programs and both perfs (root)
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt -l:"; gofmt -l .; exit 1; }
	@# -p 1: one package at a time, for steady timings (tests that load
	@# programs or run perf hold the machine anyway: testkit.Exclusive)
	BPFMETA_REQUIRE_ALL=1 $(GO) test -p 1 -count=1 -timeout 30m ./...
	BPFMETA_REQUIRE_ALL=1 $(GO) test -count=1 -race ./reader ./writer ./cmd/internal/cliutil ./internal/outfile

# perf and BPF run on 32-bit ARM and MIPS too: every Linux GOARCH Go supports
# must build (bpf(2)'s structures hold u64 pointers, whose halves depend on
# the word size and byte order). go vet compiles every package and its tests
# for the target, several at once; the build cache makes a second run take
# about a second. On x86-64 the bpf(2) test also runs as a 386 program against
# the real kernel where it runs 32-bit programs (IA32_EMULATION; Debian's
# kernels do, some VMs' do not: then the step says so and goes on).
cross: ## go vet every package for every Linux GOARCH (32-bit and big-endian included)
	@mkdir -p bin; rm -f bin/vet-*
	@for arch in $$($(GO) tool dist list | sed -n 's,^linux/,,p'); do \
		{ GOOS=linux GOARCH=$$arch $(GO) vet ./... >bin/vet-$$arch.log 2>&1 || echo $$arch >>bin/vet-failed; } & \
	done; wait; \
	if [ -e bin/vet-failed ]; then for arch in $$(cat bin/vet-failed); do \
		echo "GOARCH=$$arch go vet ./...:"; cat bin/vet-$$arch.log; done; rm -f bin/vet-*; exit 1; fi; \
	rm -f bin/vet-*
	@if [ "$$($(GO) env GOHOSTARCH)" = amd64 ]; then \
		out=$$(GOARCH=386 $(GO) test -count=1 ./internal/bpfsys 2>&1) && { echo "GOARCH=386 $$out"; exit 0; }; \
		case "$$out" in \
		*"fork/exec "*"bpfsys.test: exec format error"*) \
			echo "cross: the 386 bpf(2) test did not run: this kernel does not execute 32-bit x86 programs (IA32_EMULATION off); every GOARCH was still vetted";; \
		*) echo "GOARCH=386 go test ./internal/bpfsys:"; echo "$$out"; exit 1;; \
		esac; \
	fi

# Not part of make test: every architecture takes minutes. DIST_ARCHES
# (GOARCH names) picks some, DISTDIR (default bin/dist) the output.
dist: ## static binaries, a .deb and an .rpm per Linux GOARCH, SHA256SUMS, in bin/dist; the same bytes from the same commit
	GO='$(GO)' ./scripts/dist.sh

dist-check: ## make dist twice (DIST_ARCHES, default amd64): byte-identical; install the .deb, use it, lintian, remove, purge: nothing left (root, Debian 12)
	GO='$(GO)' ./scripts/dist-check.sh

deps: ## install what make test needs, if missing (Debian 12, root): perf, bpftool, clang, a perf >= 6.17
	./scripts/deps.sh

demo: build ## load a sample BPF program, record 3 s with the system perf, inject, show (root)
	$(GO) build -o bin/bpfmeta-demo-load ./cmd/internal/demo
	./scripts/demo.sh

fuzz: ## run every fuzz target for FUZZTIME (default 30s) each, minimizing new inputs for FUZZMINIMIZE (1s)
	./scripts/fuzz.sh $(FUZZTIME)

bench: build ## time bpfmeta against cp, cat and perf inject on big recordings, with peak RSS (root)
	./scripts/bench.sh

# Not part of make test: minutes of recording that load the machine.
soak: build deps ## record for minutes (SOAK_SECONDS) with perf 6.1 and 7.2 in production modes while programs come and go; check every command against perf (root)
	./scripts/soak.sh

golden: build deps ## regenerate the golden files (go test ./... -update; root)
	$(GO) test -count=1 ./... -update

vet: ## go vet and gofmt
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }

man: build ## write bin/bpfmeta.1, the man page, from the command's own definition
	$(BIN) man >bin/bpfmeta.1

clean: ## remove build output
	rm -rf bin
