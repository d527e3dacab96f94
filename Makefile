# The README's two set-up commands are `make run` and `make test`.
GO ?= go
BIN := bin/monomer

.PHONY: build build-openblas run test bench lint testdata test-openblas bench-openblas

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

# The models package with OpenBLAS sgemm/dgemm (needs libopenblas-dev; the
# default build above stays pure Go).
OPENBLAS := CGO_ENABLED=1 CGO_LDFLAGS=-lopenblas
build-openblas:
	$(OPENBLAS) $(GO) build -tags openblas -o $(BIN) ./cmd/monomer

# OPENBLAS_CORETYPE in the environment picks OpenBLAS's kernel (Haswell,
# SkylakeX, Zen...); TestOpenBLASInUse checks that it took effect.
test-openblas:
	$(OPENBLAS) $(GO) test -count=1 -tags openblas ./models/

bench-openblas:
	$(OPENBLAS) $(GO) test -tags openblas -run '^$$' -bench . -benchmem -timeout 60m ./models/

# vet also for macOS and 64-bit ARM Linux: code that builds only here (like a
# syscall field of one system) fails lint, not a user's build.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet ./...

# Regenerates the committed tiny data set.
testdata: build
	./$(BIN) gen --scale tiny --seed 1 --out testdata/amazon --name Demo

# Re-records every stage's output hashes for the code-version guard
# (stages/testdata/stage-versions.json) after a version bump or a change of
# the fixed input; run `make testdata` first when the generator changed.
.PHONY: golden
golden:
	$(GO) test -count=1 ./stages -run TestStageVersions -update
