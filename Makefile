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

test: test-deps
	swift test
