# The two entry points of the README. Both install what is missing first.
.PHONY: demo test deps test-deps build

deps:
	scripts/install-deps.sh

test-deps:
	scripts/install-deps.sh --test

# VLTAVA_BUILD=debug builds and serves the debug binary instead (CI's end-to-end run, which
# `swift test` has built already).
export VLTAVA_BUILD ?= release

build: deps
	swift build -c $(VLTAVA_BUILD) --product vltava

# Builds the demo store from Fixtures/ and runs the main job on it.
demo: build
	scripts/demo.sh

# The PostgreSQL suite and the fences' Python clients (LiveClientTests) run on their own after
# the rest: the cluster's 10,000-point comparison and the clients' processes take the cores for
# a minute, which would starve the in-process servers of the suites beside them and break their
# wall-clock bounds.
test: test-deps
	swift test --skip "PostGISTests|LiveClientTests"
	swift test --skip-build --filter "PostGISTests|LiveClientTests"
