# meshscope — developer targets. Everything installs what it needs through
# the Go module proxy; nothing here needs Docker or a real cluster.

GO          ?= go
BIN         ?= bin/meshscope
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS     := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
LAB         := $(GO) run ./lab/cmd/meshscope-lab
# Unit and component tests: everything but the e2e tests, which need the lab.
TEST_PKGS    = $(shell $(GO) list ./... | grep -v /test/e2e)

.PHONY: all build test lint lab lab-build lab-down lab-status e2e bench bench-go bench-lab screenshots demo clean

all: lint test build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/meshscope

## test: unit and component tests (client-go fakes, in-process xDS servers)
test:
	$(GO) test -count=1 -timeout 10m $(TEST_PKGS)

## lint: gofmt check, go vet, staticcheck
lint:
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

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
e2e: lab-build
	MESHSCOPE_E2E=1 $(GO) test -count=1 -timeout 40m -v ./test/e2e/... ; rc=$$?; \
	  $(LAB) down --dir .lab/e2e >/dev/null 2>&1; exit $$rc

## bench: every benchmark (figures in docs/benchmarks.md): the Go
## benchmarks of every package, then the collector against a real lab
bench: bench-go bench-lab

## bench-go: Go benchmarks of every package (no lab needed)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(TEST_PKGS)

## bench-lab: the collector at lab scale (issue 3): its own 3-cluster lab in
## .lab/bench (ports +200), 2,000 services / 30,000 endpoints, meshscope's time
## to synced and heap per endpoint next to a plain client-go LIST; BENCHFLAGS
## e.g. "-runs 5 -json" (the lab is stopped when it ends)
bench-lab: lab-build
	$(GO) run ./lab/cmd/meshscope-bench $(BENCHFLAGS)

## soak: meshscope's live session under the real terminal-UI model for
## SOAKTIME on the demo mesh (churn 10x faster) and, when `make lab` runs,
## on the lab too; samples heap, goroutines, xDS streams, gRPC connections
## and fds, prints their slopes per hour and fails when one grows without
## bound (the rule is printed; docs/benchmarks.md). SOAKFLAGS e.g.
## "-samples /tmp/soak -heap-profile /tmp/soak" or "-kubeconfig PATH"
SOAKTIME ?= 3m
.PHONY: soak
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
