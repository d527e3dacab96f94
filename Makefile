# The README's two set-up commands are `make run` and `make test`.
GO ?= go
BIN := bin/monomer

.PHONY: build run test bench lint testdata

build:
	$(GO) build -o $(BIN) ./cmd/monomer

# The main job on the embedded default data set.
run: build
	./$(BIN) run jobs/demo.yaml --run-dir runs/demo

test: build
	$(GO) test -count=1 -timeout 30m ./...

# Benchmarks; figures go to BENCHMARKS.md with this command.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Regenerates the committed tiny data set.
testdata: build
	./$(BIN) gen --scale tiny --seed 1 --out testdata/amazon --name Demo
