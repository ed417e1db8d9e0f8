# The two entry points of the README. Both install what is missing first.
.PHONY: demo test deps test-deps build

deps:
	scripts/install-deps.sh

test-deps:
	scripts/install-deps.sh --test

build: deps
	swift build -c release --product vltava

# Builds the demo store from Fixtures/ and runs the main job on it.
demo: build
	scripts/demo.sh

# The PostgreSQL suite runs on its own after the rest: its cluster and its 10,000-point
# comparison take both cores for a minute, which would starve the in-process servers of the
# suites beside it and break their wall-clock bounds.
test: test-deps
	swift test --skip PostGISTests
	swift test --skip-build --filter PostGISTests
