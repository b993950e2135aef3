# Earshot: `make run` starts the app on the local engine, `make test` runs
# every test. Both install what is missing first.

GO      ?= go
BIN     := bin/earshot
PKGS    := ./...
# Tests need no display, no sound card and no network beyond loopback.
export CGO_ENABLED := 1
# The build tags of every build (scripts/buildtags says why), for every go
# command make runs and the ones those run.
TAGS    := $(shell sed -e 's/\#.*//' scripts/buildtags | xargs | tr ' ' ',')
export GOFLAGS := -tags=$(TAGS)

.PHONY: all setup build run serve test vet lint fmt-check bench screenshots package clean

all: build

setup:
	@./scripts/setup

build: setup
	$(GO) build -o $(BIN) .

run: build
	./$(BIN)

serve: build
	./$(BIN) serve --addr 127.0.0.1:8080 --key "$${EARSHOT_KEY:-local-dev-key}"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	cd bench && $(GO) vet ./...

lint: vet
	$(GO) tool staticcheck $(PKGS)

# After the tests, the packages are built and tried (scripts/package-check).
# Not beside the tests: the builds' load made the agent's real-time tests
# miss their margins.
test: setup fmt-check lint
	$(GO) test -race -count=1 -timeout 25m $(PKGS)
	cd bench && $(GO) test -race -count=1 -timeout 10m ./...
	./scripts/package-check

# The Debian package, the fyne tool's tarball and the Windows build, in
# dist/ (packaging/README.md).
package: setup
	./scripts/package

bench: setup
	$(GO) test -run '^$$' -bench . $(PKGS)
	cd bench && $(GO) run ./cmd/benchtables

# Screenshots are taken of a build with the screenshots tag
# (main_screenshots.go), which the app people run does not contain.
screenshots: setup
	$(GO) vet -tags screenshots,$(TAGS) .
	./scripts/screenshots

clean:
	rm -rf bin dist
