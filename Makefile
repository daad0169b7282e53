# trainsim: build, test, benchmarks. `make deps` installs the Debian packages.
#
# Library and compiler detection lives in build/config.mk, written by a rule
# (not at parse time): `make deps demo` on a bare machine installs the packages
# first, then make restarts with the detected flags. Every object depends on
# build/config.mk, which is rewritten only when what was detected changes, so a
# change of features (MPI, NCCL, a library appearing) rebuilds what it affects.
CC      ?= cc
CXX     ?= g++
CFLAGS  ?= -O2 -g
CXXFLAGS ?= -O2 -g
SIM_INC := -Isim/ir -Isim/engine -Isim/cli -Isim/trace -Isim/api -Isim
# -fPIC: the same objects make build/libtrainsim.a and build/libtrainsim.so.
# override: a CFLAGS given on the command line (make sanitize) keeps these.
override CFLAGS  += -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Werror $(SIM_INC) -Imodels -Imodels/coll -Iplatforms -Ivalidate
override CXXFLAGS += -std=c++17 -fPIC -Wall -Wextra -Werror -Iplatforms -Imodels/coll $(SIM_INC)
FLAGS_SEEN := $(CC) $(CFLAGS) | $(CXX) $(CXXFLAGS)

# A bare `make` builds everything (the config rule below would otherwise be the first goal).
.DEFAULT_GOAL := all

DEB_PACKAGES := build-essential g++ pkg-config libsimgrid-dev libigraph-dev libgsl-dev \
                libopenmpi-dev openmpi-bin libxml2-dev libcunit1-dev libjansson-dev zlib1g-dev \
                clang-14 libclang-rt-14-dev

# What this machine has: build/config.mk, written by the rule below. On the
# first pass of `make deps ...` the file waits for deps; make then restarts
# (MAKE_RESTARTS is set) and reads what deps installed.
CONFIG := build/config.mk
ifeq ($(MAKE_RESTARTS),)
CONFIG_AFTER := $(filter deps,$(MAKECMDGOALS))
endif
-include $(CONFIG)

CUDA_HOME ?= /usr/local/cuda
HEADERS_NEEDED := simgrid/actor.h:libsimgrid-dev igraph/igraph.h:libigraph-dev gsl/gsl_vector.h:libgsl-dev \
                  libxml/tree.h:libxml2-dev CUnit/Basic.h:libcunit1-dev jansson.h:libjansson-dev zlib.h:zlib1g-dev
$(CONFIG): FORCE $(CONFIG_AFTER)
	@mkdir -p build
	@pc=$$(for p in libxml-2.0 igraph; do pkg-config --cflags $$p 2>/dev/null; done | tr '\n' ' '); \
	{ echo "# written by make (rule $(CONFIG)): what this machine has"; \
	  echo "BUILD_FLAGS := $(FLAGS_SEEN)"; \
	  echo "PKG_CFLAGS := $$pc"; \
	  echo "PKG_LIBS := $$(for p in libxml-2.0 igraph; do pkg-config --libs $$p 2>/dev/null; done | tr '\n' ' ')"; \
	  missing=""; for h in $(HEADERS_NEEDED); do \
	    echo "#include <$${h%%:*}>" | $(CC) -E -x c $$pc - >/dev/null 2>&1 || missing="$$missing $${h#*:}"; done; \
	  echo "MISSING :=$$missing"; \
	  mpicc=$$(command -v mpicc 2>/dev/null); echo "MPICC := $$mpicc"; \
	  if [ -n "$$mpicc" ]; then echo "MPI_CFLAGS := $$(mpicc --showme:compile)"; \
	                          echo "MPI_LIBS := $$(mpicc --showme:link)"; fi; \
	  echo "NVCC := $$(command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)"; \
	  echo "NCCL_H := $$(ls $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h 2>/dev/null | head -n 1)"; \
	  echo "CUBLASLT_H := $$(ls $(CUDA_HOME)/include/cublasLt.h 2>/dev/null)"; \
	} > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; echo "config: $@ written (detected features or flags changed)"; fi

# Build rules refuse to start, naming the packages, when headers are missing.
need-deps: $(CONFIG)
	@if [ -n "$(strip $(MISSING))" ]; then \
	  echo "trainsim: missing development packages:$(MISSING); run 'make deps' (or 'make deps all')"; exit 2; fi

override CFLAGS  += $(PKG_CFLAGS)
LDLIBS  := -lsimgrid -ljansson -lz -lgsl -lgslcblas -lm -lstdc++ $(PKG_LIBS)

# Every .c under the library folders belongs to libtrainsim, except the CLI
# (sim/cli/, including its MPI search driver, built only with mpicc).
CLI_SRC  := $(filter-out sim/cli/mpi_%.c, $(wildcard sim/cli/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=build/%.o)
LIB_SRC  := $(filter-out sim/cli/%, $(wildcard sim/*/*.c models/*/*.c \
              platforms/*.c $(filter-out validate/bench_%.c, $(wildcard validate/*.c))))
LIB_CXX  := $(wildcard platforms/*.cpp sim/engine/*.cpp)
LIB_OBJ  := $(LIB_SRC:%.c=build/%.o) $(LIB_CXX:%.cpp=build/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=build/%.o)

# `trainsim search` under mpirun: built only where mpicc exists; the serial
# path (and every other command) never calls MPI. libmpi links before
# libsimgrid: SimGrid exports SMPI's own MPI_* symbols, which must not win.
ifneq ($(MPICC),)
MPI_OBJ := build/sim/cli/mpi_search.o
build/sim/cli/mpi_search.o: override CFLAGS += $(MPI_CFLAGS)
build/sim/cli/cmd_search.o: override CFLAGS += -DTS_HAVE_MPI
endif

# bin/trainsim-bench (MPI-launched; docs/validation.md): built when mpicc
# exists; never linked with SimGrid, whose SMPI exports MPI_Init too. Its nccl
# backend joins when nvcc and nccl.h are found.
BENCH_SRC := validate/bench_main.c validate/bench_mpi.c validate/bench_schedule.c
BENCH_BIN := $(if $(MPICC),bin/trainsim-bench)
ifeq ($(NVCC),)
NCCL_WHY  := skipped: nvcc not found (PATH, $(CUDA_HOME)/bin)
else ifeq ($(NCCL_H),)
NCCL_WHY  := skipped: nccl.h not found ($(CUDA_HOME)/include, /usr/include)
else
NCCL_WHY  := built with $(NCCL_H)
BENCH_SRC += validate/bench_nccl.c
BENCH_DEFS := -DTS_HAVE_NCCL -I$(CUDA_HOME)/include
BENCH_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudart
endif

# bin/trainsim-gemm (validate/bench_gemm.c): GEMMs timed with cuBLASLt on a real
# GPU, written as a --gemm-table; built when the CUDA toolkit's cuBLASLt is found.
GEMM_BIN := $(if $(CUBLASLT_H),bin/trainsim-gemm)
GEMM_WHY := $(if $(CUBLASLT_H),built with $(CUBLASLT_H),skipped: cublasLt.h not found ($(CUDA_HOME)/include))

# The shared library, man pages and bash completion (rules below).
SOVERSION  := 0
VERSION    := 0.1.0
SHLIB      := build/libtrainsim.so.$(SOVERSION)
MAN_STAMP  := build/man/man1/trainsim.1
COMPLETION := build/completion/trainsim

.PHONY: all deps check test clean demo accuracy sanitize bench bench-workload bench-search golden fuzz validate-cpu need-deps \
        FORCE install uninstall
all: bin/trainsim $(BENCH_BIN) $(GEMM_BIN) $(SHLIB) $(MAN_STAMP) $(COMPLETION)
FORCE:

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# On make's restart after deps (MAKE_RESTARTS set) the packages are in already.
deps:
ifeq ($(MAKE_RESTARTS),)
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PACKAGES)
else
	@echo "deps: installed"
endif

build/%.o: %.c $(CONFIG) | need-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

build/%.o: %.cpp $(CONFIG) | need-deps
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -MMD -MP -c $< -o $@

# Rebuilt whole: an object whose source was removed must not linger in it.
build/libtrainsim.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The shared library (for embedding: sim/api/trainsim.h, docs/api.md).
$(SHLIB): $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libtrainsim.so.$(SOVERSION) -Wl,--no-undefined -o $@ $^ $(LDLIBS)

bin/trainsim: $(CLI_OBJ) $(MPI_OBJ) build/libtrainsim.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS)

bin/test_trainsim: $(TEST_OBJ) build/libtrainsim.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ -lcunit $(LDLIBS)

build/tests/%.o: override CFLAGS += -Itests

# Benchmarks: experiments/bench/bench_NAME.c -> bin/bench_NAME
bin/bench_%: build/experiments/bench/bench_%.o build/libtrainsim.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

bin/trainsim-bench: $(BENCH_SRC) validate/bench.h build/libtrainsim.a $(CONFIG)
	@mkdir -p bin
	@echo "trainsim-bench: backends mpi, schedule; nccl $(NCCL_WHY)"
	$(MPICC) $(CFLAGS) $(BENCH_DEFS) -o $@ $(BENCH_SRC) build/libtrainsim.a $(BENCH_LIBS) -ljansson -lxml2 -lm

bin/trainsim-gemm: validate/bench_gemm.c $(CONFIG)
	@mkdir -p bin
	@echo "trainsim-gemm: $(GEMM_WHY)"
	$(CC) $(filter-out -Werror,$(CFLAGS)) -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
	    -lcublasLt -lcudart -lm

# make check: CUnit suites (they also run bin/trainsim for CLI behaviour), then
# CI regression mode (trainsim replay) on the sample traces' goldens, then
# make install into a scratch prefix used as a user would (tests/install.sh).
check test: all bin/test_trainsim
	bin/test_trainsim
	tests/golden/run.sh
	CC="$(CC)" EXAMPLE_FLAGS="$(filter -fsanitize=% -fno-sanitize%,$(CFLAGS))" tests/install.sh
	$(if $(BENCH_BIN),tests/validate_cpu.sh,@echo "validate-cpu: skipped (no mpicc)")
	$(MAKE) --no-print-directory accuracy
	@echo "check: CUnit suites, replay goldens, install, the validation loop and the accuracy thresholds all passed"

# The accuracy report (docs/accuracy.md): every shipped measurement predicted
# (collective sweeps: error per file, uncalibrated and calibrated; published
# training runs: error per row, MAPE and Spearman per table), held to the
# committed thresholds; CSV and SVG under build/.
accuracy: bin/trainsim
	@mkdir -p build
	bin/trainsim accuracy --thresholds tests/accuracy/thresholds.csv --csv build/accuracy.csv --svg build/accuracy.svg

# make sanitize: everything rebuilt with AddressSanitizer + UndefinedBehavior-
# Sanitizer (the flags are recorded in build/config.mk, so objects rebuild on
# the way in and again on the next plain make), then the whole of make check.
# Any report fails the run: UBSan does not recover; SimGrid's own allocations
# at exit are not ours to fix, so leak checking is off.
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
sanitize:
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MAKE) CFLAGS="$(SAN_FLAGS)" CXXFLAGS="$(SAN_FLAGS)" check

# The measure-calibrate-compare loop on this machine's CPUs (docs/validation.md).
validate-cpu: bin/trainsim bin/trainsim-bench
	tests/validate_cpu.sh

# Rewrite the replay goldens after an intended change of the models.
golden: bin/trainsim
	tests/golden/run.sh --write-golden

# The shipped examples of the README: a trace on two nodes, then study 01 reduced
# (one GPT on three fabrics: iteration time, exposed communication, busiest link).
demo: bin/trainsim
	bin/trainsim sim --platform dgx-h100-superpod --nodes 2 \
	    --trace configs/traces/dp-overlap-16.json --links 5
	@echo
	experiments/01-whatif-topology/run.sh --quick

bench: bin/trainsim
	experiments/bench/scale.sh
	experiments/bench/run.sh
	experiments/bench/kineto_import.sh
	experiments/bench/validate_accuracy.sh

# Fuzzing (libFuzzer + ASan/LeakSanitizer): one harness per trace format, built
# with clang over the importers and the op graph code only.
FUZZ_CC      ?= clang-14
FUZZ_FLAGS   := -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                $(SIM_INC)
FUZZ_LIB     := $(wildcard sim/trace/*.c sim/ir/*.c)
FUZZ_FORMATS := kineto chakra_et chakra_json nccl_log smpi_ti native \
                pytorch_et smpi_index simgrid_xml golden
# Harnesses of the other input formats: their own sources (FUZZ_SRC_<format>).
FUZZ_SRC_nccl_tests := validate/val_parse.c $(wildcard models/coll/*.c) sim/ir/util.c sim/ir/opgraph.c
FUZZ_SRC_hf_config  := models/workload/model.c models/workload/stack.c sim/ir/util.c
FUZZ_SRC_layout     := models/workload/model.c models/workload/stack.c sim/ir/util.c
FUZZ_SRC_nccl_topo  := platforms/nccl_topo.c sim/ir/util.c
FUZZ_SRC_msccl      := $(wildcard models/coll/*.c) sim/ir/util.c sim/ir/opgraph.c
FUZZ_SRC_cluster     := $(filter-out %.cpp,$(wildcard platforms/*.c)) models/compute/compute.c $(wildcard models/coll/*.c) \
                        sim/ir/util.c sim/ir/opgraph.c
FUZZ_SRC_calibration := $(FUZZ_SRC_cluster)
FUZZ_LIBS_cluster     = $(shell pkg-config --cflags --libs igraph)
FUZZ_LIBS_calibration = $(FUZZ_LIBS_cluster)
FUZZ_SRC_tuning      := $(wildcard models/coll/*.c) sim/ir/util.c sim/ir/opgraph.c
FUZZ_SRC_constraint  := models/search/constraint.c models/workload/model.c models/workload/stack.c sim/ir/util.c
FUZZ_OTHER   := nccl_tests hf_config layout nccl_topo msccl cluster calibration tuning constraint
FUZZ_FORMATS += $(FUZZ_OTHER)
FUZZ_BINS    := $(FUZZ_FORMATS:%=bin/fuzz_%)
# harnesses of inputs read outside sim/trace: their extra sources
FUZZ_EXTRA_simgrid_xml := sim/engine/platform_check.c
FUZZ_EXTRA_golden      := sim/engine/replay.c

bin/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h tests/fuzz/fuzz_split.h $(FUZZ_LIB) $(wildcard sim/trace/*.h sim/ir/*.h) \
            sim/engine/platform_check.c sim/engine/replay.c
	@mkdir -p bin
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags libxml-2.0) -o $@ $< $(FUZZ_LIB) $(FUZZ_EXTRA_$*) \
	    -ljansson -lz -lxml2 -lm

$(FUZZ_OTHER:%=bin/fuzz_%): bin/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard sim/ir/*.h models/*/*.h platforms/*.h validate/*.h)
	@mkdir -p bin
	$(FUZZ_CC) $(FUZZ_FLAGS) -Imodels -Imodels/coll -Iplatforms -Ivalidate -I/usr/include/libxml2 -o $@ $< $(FUZZ_SRC_$*) \
	    $(FUZZ_LIBS_$*) -ljansson -lxml2 -lz -lm

# make fuzz: at least FUZZ_RUNS executions per format, then a summary table.
FUZZ_RUNS ?= 100000
fuzz: $(FUZZ_BINS)
	FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run.sh $(FUZZ_FORMATS)

# trainsim run at 1,024 to 16,384 GPUs (docs/workload.md has the table).
bench-workload: bin/trainsim bin/bench_estimate
	experiments/bench/workload.sh
	bin/bench_estimate 1024
	bin/bench_estimate 16384

# trainsim search on GPT-3 175B / 1,024 A100s and Llama-3 70B / 512 H100s (docs/search.md).
bench-search: bin/trainsim
	experiments/bench/search.sh

clean:
	rm -rf build bin

# Man pages and bash completion, generated from the commands' --help texts
# and the shipped configs/ names.
$(MAN_STAMP): bin/trainsim sim/cli/gen_man.sh
	@rm -rf build/man
	sim/cli/gen_man.sh bin/trainsim build/man/man1
$(COMPLETION): bin/trainsim sim/cli/gen_completion.sh $(wildcard configs/*/*.json)
	@mkdir -p $(dir $@)
	sim/cli/gen_completion.sh bin/trainsim configs > $@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=staging]: what goes where is in
# README.md ("Install"). Every file installed is listed in
# share/trainsim/install-manifest, which `make uninstall` removes exactly.
PREFIX     ?= /usr/local
BINDIR     := $(PREFIX)/bin
LIBDIR     := $(PREFIX)/lib
INCLUDEDIR := $(PREFIX)/include
DATADIR    := $(PREFIX)/share/trainsim
MANDIR     := $(PREFIX)/share/man
COMPLDIR   := $(PREFIX)/share/bash-completion/completions
MANIFEST   := $(DATADIR)/install-manifest
PC_REQUIRES := simgrid jansson gsl libxml-2.0 igraph zlib

install: all build/libtrainsim.a
	@set -e; D='$(DESTDIR)'; list=$$(mktemp); \
	if [ -f "$$D$(MANIFEST)" ]; then grep '/$$' "$$D$(MANIFEST)" > $$list || true; fi; \
	put() { mode=$$1 src=$$2 dst=$$3 d=$$(dirname "$$D$$3") new=""; \
	  while [ ! -d "$$d" ] && [ "$$d" != "$$D" ]; do new="$$d $$new"; d=$$(dirname "$$d"); done; \
	  install -D -m $$mode "$$src" "$$D$$dst"; for d in $$new; do echo "$${d#$$D}/" >> $$list; done; \
	  echo "$$dst" >> $$list; }; \
	for b in bin/trainsim $(BENCH_BIN); do put 755 $$b $(BINDIR)/$${b#bin/}; done; \
	put 644 build/libtrainsim.a $(LIBDIR)/libtrainsim.a; \
	put 755 $(SHLIB) $(LIBDIR)/libtrainsim.so.$(SOVERSION); \
	ln -sf libtrainsim.so.$(SOVERSION) "$$D$(LIBDIR)/libtrainsim.so"; echo "$(LIBDIR)/libtrainsim.so" >> $$list; \
	put 644 sim/api/trainsim.h $(INCLUDEDIR)/trainsim.h; \
	{ echo 'prefix=$(PREFIX)'; echo 'libdir=$${prefix}/lib'; echo 'includedir=$${prefix}/include'; \
	  echo 'datadir=$${prefix}/share/trainsim'; echo; echo 'Name: trainsim'; \
	  echo 'Description: GPU cluster training simulator: the embedding API of trainsim.h'; \
	  echo 'Version: $(VERSION)'; echo 'Requires.private: $(PC_REQUIRES)'; \
	  echo 'Cflags: -I$${includedir}'; echo 'Libs: -L$${libdir} -ltrainsim'; \
	  echo 'Libs.private: -lstdc++ -lm'; } > build/trainsim.pc; \
	put 644 build/trainsim.pc $(LIBDIR)/pkgconfig/trainsim.pc; \
	for f in $$(cd configs && find . -type f | LC_ALL=C sort); do put 644 configs/$$f $(DATADIR)/$${f#./}; done; \
	for f in build/man/man1/*.1; do put 644 $$f $(MANDIR)/man1/$${f##*/}; done; \
	put 644 $(COMPLETION) $(COMPLDIR)/trainsim; \
	echo "$(MANIFEST)" >> $$list; install -D -m 644 $$list "$$D$(MANIFEST)"; rm -f $$list; \
	echo "installed $$(grep -vc '/$$' "$$D$(MANIFEST)") files under $$D$(PREFIX) (list: $$D$(MANIFEST))"

uninstall:
	@set -e; D='$(DESTDIR)'; m="$$D$(MANIFEST)"; \
	if [ ! -f "$$m" ]; then echo "uninstall: no $$m: nothing installed under $$D$(PREFIX)"; exit 0; fi; \
	list=$$(mktemp); cp "$$m" $$list; n=0; \
	for f in $$(grep -v '/$$' $$list); do rm -f "$$D$$f"; n=$$((n + 1)); done; \
	for d in $$(grep '/$$' $$list | LC_ALL=C sort -r); do rmdir "$$D$$d" 2>/dev/null || true; done; \
	rm -f $$list; echo "uninstall: removed $$n files and the folders install made under $$D$(PREFIX)"

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(MPI_OBJ:.o=.d)
