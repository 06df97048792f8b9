# meshscope — developer targets. Everything installs what it needs through
# the Go module proxy; nothing here needs Docker or a real cluster.

GO          ?= go
BIN         ?= bin/meshscope
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE        ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)
LDFLAGS     := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
FUZZTIME    ?= 30s
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
LAB         := $(GO) run ./lab/cmd/meshscope-lab
# Unit and component tests: everything but the e2e tests, which need the lab.
TEST_PKGS    = $(shell $(GO) list ./... | grep -v /test/e2e)

.PHONY: all build test lint fuzz release man lab lab-build lab-down lab-status e2e bench bench-go bench-compare bench-lab bench-e2e soak screenshots demo clean

all: lint test build

## build: bin/meshscope and bin/kubectl-meshscope (the same program; under
## that name it is the kubectl plugin "kubectl meshscope")
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/meshscope
	cp $(BIN) $(dir $(BIN))kubectl-meshscope

## test: unit and component tests (client-go fakes, in-process xDS servers)
test:
	$(GO) test -count=1 -timeout 10m $(TEST_PKGS)

## lint: gofmt check, go vet, staticcheck
lint:
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## fuzz: every fuzz target for FUZZTIME each (default 30s); the seed
## corpora (testdata/fuzz) also run in make test
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash .ci/fuzz

## release: dist/ archives of meshscope and kubectl-meshscope for
## linux/darwin/windows x amd64/arm64, dist/checksums.txt (SHA-256) and the
## krew manifest dist/krew/meshscope.yaml; VERSION=vX.Y.Z after tagging
release:
	VERSION=$(VERSION) COMMIT=$(COMMIT) DATE=$(DATE) GO=$(GO) bash .ci/release

## man: a man page per command into dist/man (cobra/doc)
man:
	MESHSCOPE_MAN_DIR=$(abspath dist/man) $(GO) test -count=1 -run '^TestManPages$$' ./cmd/meshscope/
	@ls dist/man

## lab: build (once, cached in .lab/bin) and start etcd, two kube-apiservers and istiod
lab:
	$(LAB) up $(LABFLAGS)

lab-build:
	$(LAB) build

lab-down:
	$(LAB) down

lab-status:
	$(LAB) status

## e2e: the end-to-end tests against a lab of their own (started and stopped by the tests)
## (test/e2e and, on a lab of its own, test/e2e/ambient: one after the other)
e2e: lab-build
	MESHSCOPE_E2E=1 $(GO) test -p 1 -count=1 -timeout 40m -v ./test/e2e/... ; rc=$$?; \
	  $(LAB) down --dir .lab/e2e >/dev/null 2>&1; $(LAB) down --dir .lab/e2e-ambient >/dev/null 2>&1; exit $$rc

## bench: every benchmark (figures in docs/benchmarks.md): the Go
## benchmarks of every package, then the collector against a real lab
bench: bench-go bench-lab

## bench-go: Go benchmarks of every package (no lab needed)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(TEST_PKGS)

## bench-compare: the Go benchmarks of docs/benchmarks.md's table on BASE
## (a git revision) and on the working tree, alternately, with min–max per
## benchmark side by side, e.g. `make bench-compare BASE=d9da168`
BASE ?= HEAD~1
bench-compare:
	lab/bench/compare.sh $(BASE)

## bench-lab: the collector at lab scale: its own 3-cluster lab in
## .lab/bench (ports +200), 2,000 services / 30,000 endpoints, meshscope's time
## to synced and heap per endpoint next to a plain client-go LIST; BENCHFLAGS
## e.g. "-runs 5 -json" (the lab is stopped when it ends)
bench-lab: lab-build
	$(GO) run ./lab/cmd/meshscope-bench $(BENCHFLAGS)

## bench-e2e: the whole product against a real istiod: its own
## 3-cluster lab in .lab/bench-e2e (ports +300, or MESHSCOPE_BENCH_PORT_OFFSET)
## with two istiods, 2,000 services / 30,000 endpoints; the UI headless
## (time to every verdict, heap per endpoint, push-to-screen under churn),
## explain and watch --service (bytes), and what meshscope's streams cost
## istiod next to as many sidecar-shaped ones. Every figure with its target
## and PASS/MISS; BENCHFLAGS e.g. "-services 300 -endpoints 3000 -json"
bench-e2e: lab-build
	$(GO) run ./lab/cmd/meshscope-bench-e2e $(BENCHFLAGS)

## soak: meshscope's live session under the real terminal-UI model for
## SOAKTIME on the demo mesh (churn 10x faster) and, when `make lab` runs,
## on the lab too; samples heap, goroutines, xDS streams, gRPC connections
## and fds, prints their slopes per hour and fails when one grows without
## bound (the rule is printed; docs/benchmarks.md). SOAKFLAGS e.g.
## "-samples /tmp/soak -heap-profile /tmp/soak" or "-kubeconfig PATH"
SOAKTIME ?= 3m
soak:
	SOAKTIME=$(SOAKTIME) $(GO) run ./lab/cmd/meshscope-soak $(SOAKFLAGS)

## screenshots: render docs/screenshots/*.svg from the demo in tmux
screenshots:
	MESHSCOPE_SCREENSHOTS=1 $(GO) test -count=1 -run Screenshots ./test/screenshots/

## demo: the built-in demo mesh in the terminal UI
demo:
	$(GO) run ./cmd/meshscope demo

clean:
	rm -rf bin
