# The README's two set-up commands are `make run` and `make test`.
GO ?= go
BIN := bin/monomer
# Same bits on every amd64 build: from v3 on the compiler fuses a*b+c in
# the Go loops into FMAs, which round differently (README, "same bits").
export GOAMD64 := v1

.PHONY: build build-openblas run test test-purego bench bench-topk bench-sparse lint testdata test-openblas test-kernels bench-openblas test-airflow airflow-venv serving-venv test-serving test-pgvector

# Fast by default: build with OpenBLAS (cgo, -tags openblas) when
# -lopenblas links. When it does not and we are root with apt-get, Debian's
# libopenblas-dev is installed first (timeouts bound a slow mirror);
# otherwise the build is pure Go and the binary logs a WARN at start with
# what that costs. `make build BLAS=go` forces pure Go. BLAS is probed once
# per make, and only for the targets that use it.
BLAS_PROBE = printf 'int main(void){return 0;}\n' | $(CC) -x c - -lopenblas -o /dev/null >/dev/null 2>&1
# A fresh cloud machine often runs unattended upgrades at boot: apt-get
# waits up to APT_LOCK_WAIT seconds for the package manager's lock
# (DPkg::Lock::Timeout) instead of failing at once, and when it still
# cannot install, the last lines of its log say why.
APT_LOCK_WAIT ?= 300
APT = timeout $$(( $(APT_LOCK_WAIT) + 300 )) apt-get -o DPkg::Lock::Timeout=$(APT_LOCK_WAIT)
# $(call APT_INSTALL,PACKAGES) installs Debian packages, saying so.
APT_INSTALL = DEBIAN_FRONTEND=noninteractive; export DEBIAN_FRONTEND; \
	echo "make: $(1) missing; installing with apt-get (waiting up to $(APT_LOCK_WAIT) s for its lock)" >&2; \
	log=$$(mktemp); \
	if { $(APT) install -y -qq $(1) || \
	  { $(APT) update -qq && $(APT) install -y -qq $(1); }; } >$$log 2>&1; then rm -f $$log; \
	else echo "make: apt-get could not install $(1):" >&2; tail -n 3 $$log | sed 's/^/make:   /' >&2; rm -f $$log; false; fi
BLAS_INSTALL = $(call APT_INSTALL,libopenblas-dev)
BLAS_DETECT = if $(BLAS_PROBE); then echo openblas; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ($(BLAS_INSTALL)) && $(BLAS_PROBE); then echo openblas; \
	else echo "make: no libopenblas: building pure Go (dense features train about 10x slower)" >&2; echo go; fi
ifeq ($(origin BLAS),undefined)
ifneq ($(filter build run test test-airflow test-serving test-pgvector test-kernels bench bench-cores testdata docs test-cpus,$(or $(MAKECMDGOALS),build)),)
BLAS := $(shell $(BLAS_DETECT))
endif
endif
BLAS_ENV = $(if $(filter openblas,$(BLAS)),CGO_ENABLED=1 CGO_LDFLAGS=-lopenblas)
BLAS_TAGS = $(if $(filter openblas,$(BLAS)),-tags openblas)

build:
	$(BLAS_ENV) $(GO) build $(BLAS_TAGS) -o $(BIN) ./cmd/monomer

# The main job on the embedded default data set.
run: build
	./$(BIN) run jobs/demo.yaml --run-dir runs/demo

# Tests the build `make build` makes: with OpenBLAS this includes the
# openblas-tagged tests (OpenBLAS against pure Go, kernel choice).
test: build
	@[ -x $(AIRFLOW_VENV)/bin/python ] || echo "make test: SKIPPING the Airflow tests (jobs/airflow): no $(AIRFLOW_VENV); make test-airflow creates it"
	$(BLAS_ENV) $(GO) test $(BLAS_TAGS) -count=1 -timeout 30m ./...

# The Airflow tests (jobs/airflow: pytest under Apache Airflow 3, driven by
# TestAirflowDAG) against the binary `make build` made, in a virtual
# environment pinned by jobs/airflow/requirements.txt (.venv-airflow, rebuilt
# only when that file changes). `make test` runs them too when the
# environment exists and says it skipped them otherwise; here a skip fails.
AIRFLOW_VENV := .venv-airflow
airflow-venv:
	jobs/airflow/venv.sh $(AIRFLOW_VENV)

test-airflow: build airflow-venv
	MONOMER_AIRFLOW_REQUIRED=1 MONOMER_DAG_BIN=$(abspath $(BIN)) $(BLAS_ENV) $(GO) test $(BLAS_TAGS) -count=1 -timeout 30m -v -run '^TestAirflowDAG$$' ./cmd/monomer

# The serving round trip (tests/serving: `monomer export` into FAISS's
# exact IndexFlatIP, pyarrow reading every export table, driven by
# TestExport) in a virtual environment pinned by tests/serving/requirements.txt
# (.venv-serving, rebuilt only when that file changes). `make test` runs it
# when the environment exists and prints a skip line otherwise; here a skip fails.
SERVING_VENV := .venv-serving
serving-venv:
	jobs/airflow/venv.sh $(SERVING_VENV) tests/serving/requirements.txt

test-serving: build serving-venv
	MONOMER_SERVING_REQUIRED=1 $(BLAS_ENV) $(GO) test $(BLAS_TAGS) -count=1 -timeout 30m -v -run '^TestExport$$' ./cmd/monomer

# docs/serving.md's pgvector recipe, run as the doc has it, in a throwaway
# PostgreSQL with pgvector (pgserver's, in .venv-serving) on a unix socket
# of a temporary directory, against monomer's publish and recommend lists
# (tests/serving/pgvector.sh). PGVECTOR_RUN=runs/demo starts from a copy
# of that demo run (only publish reruns) instead of a fresh one.
PGVECTOR_RUN ?=
test-pgvector: build serving-venv
	BIN=$(BIN) PY=$(SERVING_VENV)/bin/python tests/serving/pgvector.sh $(PGVECTOR_RUN)

# The models package as the pure-Go build runs it.
test-purego:
	$(GO) test -count=1 ./models/

# Benchmarks; figures go to BENCHMARKS.md with this command. They run the
# kernel `monomer run` would pick (blas_kernel: auto), and print it.
bench: build
	k=$$(./$(BIN) blas | sed -n 's/^cpu_kernel: //p'); if [ -n "$$k" ]; then export OPENBLAS_CORETYPE=$$k; fi; \
	$(BLAS_ENV) $(GO) test $(BLAS_TAGS) -run '^$$' -bench . -benchmem -timeout 60m ./...
	$(MAKE) --no-print-directory bench-topk

# Exact top-k (models.BenchmarkTopK at Women's size, 5,000 queries over
# 659,566 items, top-20, LMT d = 101 and Monomer d = 84) next to faiss-cpu's
# IndexFlatIP on the same float32 vectors, written as .npy to TOPK_DIR
# (about 500 MB). FAISS runs from the serving tests' pinned virtualenv
# (.venv-serving, made on first use; FAISS_VENV names another, used as it
# is); where faiss-cpu cannot be installed one line says it is skipped.
# BENCHMARKS.md ("Exact top-k against FAISS") quotes these lines.
TOPK_DIR ?= $(or $(TMPDIR),/tmp)/monomer-topk
bench-topk:
	mkdir -p $(TOPK_DIR)
	$(GO) test ./models -run '^TestTopKWriteNpy$$' -count 1 -timeout 30m -args -topk.npy $(TOPK_DIR)
	$(GO) test ./models -run '^$$' -bench 'BenchmarkTopK//items=659566' -benchtime 1x -timeout 30m
	models/testdata/faiss_topk.sh $(TOPK_DIR)

# Explicit OpenBLAS targets (fail without libopenblas-dev).
OPENBLAS := CGO_ENABLED=1 CGO_LDFLAGS=-lopenblas
# The sparse products of LMT and Monomer (internal/csrkern) against the
# FMA peak measured in the same run, in CPU-seconds, on the small synth
# world's image rows and bags of words (pure Go and assembly, no BLAS).
# Its last line is the figure BENCHMARKS.md quotes. BENCHSPARSE_FLAGS=-path=avx2
# measures the AVX2 kernels against the AVX2 FMA peak, as on a CPU without
# AVX-512 (the default is the widest path the CPU has).
bench-sparse:
	$(GO) run ./cmd/benchsparse $(BENCHSPARSE_FLAGS)

# How the stages use the cores (cmd/benchcores): a planted world of
# SCALE (gen's scales; medium by default: its Women's also_bought image
# experiment, 60 L-BFGS iterations at one λ), prepared once, then every
# stage alone at GOMAXPROCS 1, 2 and each power of two up to the cores:
# wall, CPU-s, utilisation, speedup, peak RSS and the outputs' sha256 (the
# same at every P, or it fails). Last line: `cores: min speedup S at P=2
# over STAGES`. BENCHCORES_FLAGS adds flags: -serial (the serial share of
# each stage's CPU from a traced run, which other load does not move),
# -dir DIR (keep the world and run there), -only REGEXP, -max-iter N,
# -width 16 (each stage also traced at GOMAXPROCS 16 on these cores: its
# speedup on 16 cores projected from how many goroutines it keeps running).
SCALE ?= medium
BENCHCORES_FLAGS ?=
.PHONY: bench-cores
bench-cores: build
	$(GO) run ./cmd/benchcores -bin $(BIN) -scale $(SCALE) $(BENCHCORES_FLAGS)

# The tests whose expectations depend on the CPU (kernel choice, kernel
# refusal, the WARN lines), as every recorded CPU and with this CPU's SIMD
# features turned off downward (.ci/test-cpus says how). CPU_TESTS is
# cmd/monomer's; TestCPUTestsPlayed fails when a CPU-dependent test of
# that package is left out of it. KERNEL_PKGS are the packages with SIMD
# paths that Go's CPU detection picks.
CPU_TESTS := ^(TestBLASKernelChoice|TestRunRecordsBLAS|TestBLASKernelNotLoaded|TestBLASKernelFromEnvironment|TestPureGoWarns|TestPureGoKernelName|TestHalvesAVX512|TestUnknownBLASKernel|TestKernelThisCPUCannotRun)$$
KERNEL_PKGS := internal/csrkern internal/wnnkern internal/dotkern internal/cpuflags
.PHONY: test-cpus
test-cpus: build
	$(BLAS_ENV) GO=$(GO) .ci/test-cpus '$(CPU_TESTS)' '$(KERNEL_PKGS)' $(BLAS_TAGS)

build-openblas:
	$(OPENBLAS) $(GO) build -tags openblas -o $(BIN) ./cmd/monomer

# OPENBLAS_CORETYPE in the environment picks OpenBLAS's kernel (Haswell,
# SkylakeX, Zen...); TestOpenBLASInUse checks that it took effect. The models
# and the stages run in this process, so under that kernel; the command-line
# tests start the binary, which picks its own (blas_kernel: auto), so
# `make test` covers them once. -short leaves out the long quality tests
# (their margins are far above a kernel's rounding; `make test` runs them),
# and keeps every test that compares code paths or kernels.
test-openblas:
	$(OPENBLAS) $(GO) test -count=1 -short -tags openblas ./models/
	$(OPENBLAS) $(GO) test -count=1 -short -tags openblas ./stages/

# make test-openblas under every kernel of TEST_KERNELS this CPU can
# execute, asked of the binary (`monomer blas --kernels`, from the CPU's
# flags): a kernel forced on a CPU without its instructions (SkylakeX on an
# AMD Zen 3, which has no AVX-512) would die with SIGILL. One SKIPPING line
# for each kernel it cannot run; it fails when it ran none, or without
# libopenblas.
TEST_KERNELS := Haswell SkylakeX
test-kernels: build
	@[ "$(BLAS)" = openblas ] || { echo "make test-kernels: needs libopenblas-dev"; exit 1; }
	@ks=$$(./$(BIN) blas --kernels); echo "$$ks" | head -n 1; \
	ran=0; for k in $(TEST_KERNELS); do \
	  why=$$(echo "$$ks" | sed -n "s/^$$k: //p"); \
	  if [ "$$why" != runs ]; then echo "SKIPPING $$k: $${why:-not a kernel monomer knows}"; continue; fi; \
	  echo "make test-openblas with OPENBLAS_CORETYPE=$$k"; \
	  OPENBLAS_CORETYPE=$$k $(MAKE) --no-print-directory test-openblas || exit 1; ran=$$((ran + 1)); \
	done; \
	if [ $$ran = 0 ]; then echo "make test-kernels: this CPU runs none of $(TEST_KERNELS)"; exit 1; fi

bench-openblas:
	$(OPENBLAS) $(GO) test -tags openblas -run '^$$' -bench . -benchmem -timeout 60m ./models/

# vet also for another system and another architecture at once, macOS on
# 64-bit ARM: code that builds only here (a syscall field of Linux, an
# amd64 kernel without its Go fallback) fails lint, not a user's build. It
# compiles every dependency for that platform only for its export data, so
# without optimisation or inlining (-N -l): a quarter less CPU from a cold
# cache, the same checks. One cross vet where there were two (darwin/amd64
# and linux/arm64) halves what it costs; TestCrossVetCovers
# (internal/repocheck) fails on the first file only one of those two would
# have checked.
CROSS_VET = $(GO) vet -gcflags=all='-N -l' ./...
# .ci/large-files: no tracked file over 1 MiB outside testdata/ (a built
# binary committed by mistake stays in every clone).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@.ci/large-files
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(CROSS_VET)

# The reference pages printed from the code (docs/settings.md from the
# settings' declarations, docs/tables.md from package schema);
# cmd/docgen's TestDocsUpToDate fails until they are regenerated.
.PHONY: docs-ref
docs-ref:
	$(GO) run ./cmd/docgen

# The pictures and figures of the docs, from a fresh demo run (runs/docs):
# docs/report.png, the report in headless Chromium (Debian's chromium), and
# stages/testdata/demo-tables.md, the golden copy of the run's tables.md
# (the BLAS it names left out) that TestDemoTables holds the demo to; then
# the reference pages. Commit them together.
DOCS_RUN := runs/docs
.PHONY: docs
docs: build docs-ref
	@[ -x /usr/bin/chromium ] || { echo "make docs: needs Debian's chromium (apt-get install -y chromium)" >&2; exit 1; }
	rm -rf $(DOCS_RUN)
	./$(BIN) run jobs/demo.yaml --run-dir $(DOCS_RUN)
	sed -E 's/; BLAS .*\. The run/; BLAS (left out). The run/' $(DOCS_RUN)/report/tables.md >stages/testdata/demo-tables.md
	$(GO) run ./cmd/docgen -screenshot $(DOCS_RUN)/report/index.html

# Regenerates the committed tiny data set.
testdata: build
	./$(BIN) gen --scale tiny --seed 1 --out testdata/amazon --name Demo

# Re-records every stage's output hashes for the code-version guard
# (stages/testdata/stage-versions.json) after a version bump or a change of
# the fixed input, in every build the tests compare: pure Go, and OpenBLAS
# under the CPU's own kernel and under each kernel .ci/run sets
# (GOLDEN_KERNELS), plus Cooperlake, the Zen 4 kind's own: recorded on
# another CPU (a Zen 5 picks another kernel) it would otherwise be lost.
# Builds that write the same bits share one record. Run `make testdata`
# first when the generator changed. Five runs of the golden job: 59 CPU-s,
# 40 s wall on an idle Zen 5. It needs libopenblas (without it the OpenBLAS
# records would be lost).
#
# On a CPU that cannot run a kernel of GOLDEN_KERNELS (SkylakeX and
# Cooperlake on a Zen 3) it records the others and keeps that kernel's
# records from the file before (cache.KeepRecords), printing each: where
# its bits agreed with a recorded build's it joins that record as
# "inferred" (every run under it still compares), where it had a record of
# its own (the report, which names its kernel) that record is kept, marked
# "stale" and only noted when its version or inputs are not today's.
# Re-record on a CPU that runs it (an AVX-512 machine with BF16) before its
# stage's version changes again.
GOLDEN_KERNELS := Haswell SkylakeX Cooperlake
GOLDEN_ARGS = -count=1 -timeout 45m ./stages -run TestStageVersions
GOLDEN_FILE := stages/testdata/stage-versions.json
.PHONY: golden
golden:
	@$(BLAS_PROBE) || { echo "make golden: needs libopenblas-dev: it records the OpenBLAS builds too" >&2; exit 1; }
	@ks=$$($(GO) run ./cmd/monomer blas --kernels); run=; kept=; \
	for k in $(GOLDEN_KERNELS); do why=$$(echo "$$ks" | sed -n "s/^$$k: //p"); \
	  if [ "$$why" = runs ]; then run="$$run $$k"; else kept="$$kept,$$k"; \
	    echo "make golden: $$k: $$why: keeping its records; re-record them on a CPU that runs $$k before their stages' versions change again" >&2; fi; done; \
	old=$$(mktemp); cp $(GOLDEN_FILE) $$old 2>/dev/null || :; rm -f $(GOLDEN_FILE); \
	$(GO) test $(GOLDEN_ARGS) -update && \
	$(OPENBLAS) $(GO) test -tags openblas $(GOLDEN_ARGS) -update && \
	for k in $$run; do OPENBLAS_CORETYPE=$$k $(OPENBLAS) $(GO) test -tags openblas $(GOLDEN_ARGS) -update || exit 1; done && \
	if [ -n "$$kept" ] && [ -s $$old ]; then $(GO) test $(GOLDEN_ARGS) -v -keep-from $$old -keep-kernels "$${kept#,}" | grep '^make golden:'; fi; \
	rc=$$?; if [ $$rc != 0 ] && [ -s $$old ]; then cp $$old $(GOLDEN_FILE); echo "make golden: failed; $(GOLDEN_FILE) restored" >&2; fi; rm -f $$old; exit $$rc

# Mutation testing of the libraries whose tests are fast (not in CI): each
# package's short tests run once per mutant (gremlins, from the Go module
# proxy), results in out/mutants-PKG.json (pipeline/cache: mutants-pipeline-
# cache.json) and, as they come, out/mutants-PKG.log: gremlins writes the
# JSON only at the end. docs/notes/2026-11-25-test-efficacy.md has the efficacy and the survivors.
# CPU-heavy: about 5 CPU-s a mutant, some 2,000 mutants over the six
# packages, so hours on 2 cores; `make mutants MUTANT_PKGS=graph` runs one
# package, GREMLINS_FLAGS adds flags (`-E 'analyze\.go'` skips a file).
# GREMLINS_WORKERS bounds parallel runs. Each package is its own run (-E /
# leaves out the files of subdirectories: a mutant is tested by its own
# package's tests only, so pipeline/cache is run by itself). A mutant that
# hangs is killed after the coefficient times the coverage run's wall
# time: 10 where compiling dominates that run, 3 for pipeline, whose short
# tests alone take 15-30 s (10 made each hung mutant cost 5-7 minutes).
MUTANT_PKGS ?= graph schema bow amazon pipeline pipeline/cache
GREMLINS_WORKERS ?= 1
GREMLINS_FLAGS ?=
GREMLINS = $(GO) run github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
.PHONY: mutants
mutants:
	@mkdir -p out
	@for p in $(MUTANT_PKGS); do n=$$(echo $$p | tr / -); c=10; \
	  case $$p in pipeline) c=3;; esac; \
	  echo "mutants: $$p (log out/mutants-$$n.log)"; \
	  { GOFLAGS="$$GOFLAGS -short -count=1" $(GREMLINS) unleash --workers $(GREMLINS_WORKERS) \
	    --timeout-coefficient $$c -E / $(GREMLINS_FLAGS) -o out/mutants-$$n.json ./$$p 2>&1 \
	    || echo "mutants: $$p failed" >out/mutants-$$n.failed; } | tee out/mutants-$$n.log; \
	  if [ -e out/mutants-$$n.failed ]; then rm out/mutants-$$n.failed; exit 1; fi; done

# The container image (Containerfile, docs/scheduling.md): FROM scratch,
# since these machines cannot pull a base image, holding a static monomer
# built here with the Go build cache, so a rebuild after a one-line change
# recompiles one package and relinks (seconds) and the image build reuses
# every layer but the binary's. OpenBLAS is linked in statically (Debian's
# libopenblas.a and libgfortran-12-dev's libgfortran.a; installed with
# apt-get when missing and we are root), else the image is pure Go; its
# label io.monomer.blas says which. netgo,osusergo: Go's own resolver and
# user lookup, so no glibc NSS module is needed at run time. podman, or
# docker when its daemon answers (CONTAINER=... picks one).
IMAGE ?= monomer:latest
IMAGE_DIR := bin/image
# The image's user (a numeric uid, which Kubernetes' runAsNonRoot needs);
# monomer_dag.py's POD_UID must equal it (its test compares them).
IMAGE_UID := 65532
CONTAINER_TOOLS ?= podman docker
IMAGE_STATIC_PROBE = printf 'int main(void){return 0;}\n' | $(CC) -x c - -static -lopenblas -lgfortran -lquadmath -lm -lpthread -o /dev/null >/dev/null 2>&1
IMAGE_BLAS_DETECT = if $(IMAGE_STATIC_PROBE); then echo openblas; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ($(call APT_INSTALL,libopenblas-dev libgfortran-12-dev)) && $(IMAGE_STATIC_PROBE); then echo openblas; \
	else echo "make image: no static OpenBLAS (libopenblas.a of libopenblas-dev, libgfortran.a of libgfortran-12-dev): the image is pure Go (dense features train about 10x slower)" >&2; echo go; fi
CONTAINER_DETECT = for t in $(CONTAINER_TOOLS); do command -v $$t >/dev/null 2>&1 || continue; \
	if [ $$t = docker ] && ! docker info >/dev/null 2>&1; then continue; fi; echo $$t; break; done
# test-image installs podman before its own `make image` detects it.
ifneq ($(filter image,$(MAKECMDGOALS)),)
ifeq ($(origin CONTAINER),undefined)
CONTAINER := $(shell $(CONTAINER_DETECT))
endif
# Without a container tool the recipe's first line fails; nothing to probe.
ifneq ($(CONTAINER),)
ifeq ($(origin IMAGE_BLAS),undefined)
IMAGE_BLAS := $(shell $(IMAGE_BLAS_DETECT))
endif
endif
endif
IMAGE_BUILD_openblas = CGO_ENABLED=1 CGO_LDFLAGS='-lopenblas -lgfortran -lquadmath -lm' $(GO) build -buildvcs=auto \
	-tags openblas,netgo,osusergo -ldflags '-s -w -linkmode=external -extldflags=-static'
IMAGE_BUILD_go = CGO_ENABLED=0 $(GO) build -buildvcs=auto -tags netgo,osusergo -ldflags '-s -w'
# Staged files are rewritten only when their bytes change (cmp), so their
# layers' cache keys stay put; mode 0644, as the image's user is not root.
IMAGE_PUT = put() { cmp -s "$$1" "$$2" || cp "$$1" "$$2"; chmod 0644 "$$2"; }
.PHONY: image test-image
image:
	@[ -n "$(CONTAINER)" ] || { echo "make image: needs podman or docker with its daemon running (Debian: apt-get install podman runc)" >&2; exit 1; }
	@case "$(IMAGE_BLAS)" in openblas|go) ;; *) echo "make image: IMAGE_BLAS=$(IMAGE_BLAS): want openblas or go" >&2; exit 2;; esac
	@[ -s /etc/ssl/certs/ca-certificates.crt ] || { echo "make image: needs /etc/ssl/certs/ca-certificates.crt (Debian: apt-get install ca-certificates)" >&2; exit 1; }
	@mkdir -p $(IMAGE_DIR)/rootfs/etc/ssl/certs $(IMAGE_DIR)/rootfs/tmp $(IMAGE_DIR)/rootfs/data $(IMAGE_DIR)/jobs
	@chmod 1777 $(IMAGE_DIR)/rootfs/tmp
	@$(IMAGE_PUT); t=$$(mktemp); \
	echo 'monomer:x:$(IMAGE_UID):$(IMAGE_UID):monomer:/data:/nonexistent' >$$t; put $$t $(IMAGE_DIR)/rootfs/etc/passwd; \
	echo 'monomer:x:$(IMAGE_UID):' >$$t; put $$t $(IMAGE_DIR)/rootfs/etc/group; rm -f $$t; \
	put /etc/ssl/certs/ca-certificates.crt $(IMAGE_DIR)/rootfs/etc/ssl/certs/ca-certificates.crt; \
	for f in $(IMAGE_DIR)/jobs/*.yaml; do [ -e "jobs/$${f##*/}" ] || rm -f "$$f"; done; \
	for f in jobs/*.yaml; do put "$$f" $(IMAGE_DIR)/jobs/$${f##*/}; done
	$(IMAGE_BUILD_$(IMAGE_BLAS)) -o $(IMAGE_DIR)/monomer ./cmd/monomer
	$(CONTAINER) build -f Containerfile -t $(IMAGE) \
	  --label org.opencontainers.image.version="$$(git describe --tags --always --dirty 2>/dev/null || echo unknown)" \
	  --label org.opencontainers.image.revision="$$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
	  --label org.opencontainers.image.created="$$(git log -1 --format=%cI 2>/dev/null || echo unknown)" \
	  --label io.monomer.blas="$$($(IMAGE_DIR)/monomer blas | awk '/^(impl|version):/ && $$2 != "" { printf "%s%s", s, $$2; s = " " }')" \
	  --build-arg UID=$(IMAGE_UID) .

# The image run as CI runs it (.ci/test-image says what it checks).
test-image:
	CONTAINER=$(CONTAINER) IMAGE=$(IMAGE) MAKE="$(MAKE)" AIRFLOW_VENV=$(AIRFLOW_VENV) .ci/test-image
