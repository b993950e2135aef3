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

# The packages are built while the tests run, at the lowest priority:
# the tests leave a core idle much of the time (audio at real-time pace),
# and the builds take that time rather than the tests'. They are then
# tried (scripts/package-check).
test: setup fmt-check lint
	@mkdir -p dist; rm -f dist/earshot_*.deb dist/Earshot-*; \
	setsid nice -n 19 ./scripts/package deb tarball windows >dist/package.log 2>&1 & pkg=$$!; \
	trap 'kill -- -$$pkg 2>/dev/null' EXIT; \
	$(GO) test -race -count=1 -timeout 25m $(PKGS) && \
	(cd bench && $(GO) test -race -count=1 -timeout 10m ./...) || exit 1; \
	echo "waiting for the packages (dist/package.log)"; \
	wait $$pkg; rc=$$?; trap - EXIT; cat dist/package.log; \
	[ $$rc -eq 0 ] || { echo "scripts/package failed"; exit 1; }; \
	PACKAGE_CHECK_BUILT=1 ./scripts/package-check

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
