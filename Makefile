# tensorgl — the only build entry point.
#   make                 build/libtensorgl.so, build/libtensorgl.a, build/tensorgl
#   make check           install missing packages, build, run the tests (a quarter of each sweep:
#                        about 5 minutes on two cores with empty caches)
#   make check-full      the same, every case of every sweep, plus every SPIR-V module built and
#                        every kernel variant validated (CI; about 30 minutes on two cores)
#   make check-spirv     what check-full adds to check: the SPIR-V modules, their validation, test_spirv
#   make check[-full] SANITIZE=1  the same under ASan + UBSan (in build/sanitize/; the kernel text
#                        is the same, so its validation runs only in the plain build)
#   make demo            install missing packages, build and run the demo
#   make bench           install missing packages (OpenBLAS too), run `tensorgl bench` (build/bench.json)
#   make install PREFIX=/usr/local DESTDIR=    (make uninstall removes exactly what it installed)
#   make spirv           build/tensorgl-spirv: every kernel variant as a SPIR-V module (TGL_SHADER=spirv)
#   make check-install   stage an install, build docs/examples/ against it with pkg-config, run them
#   make deps            install the missing Debian packages only
#   make analyze | check-valgrind | fuzz | soak | check-huge | check-torch   reliability tools (docs/reliability.md)
#   make repro           build/upload_order: a GL program without tensorgl (docs/internals.md, uploads)

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

VERSION_OF = $(shell sed -n 's/^\#define TGL_VERSION_$(1) \([0-9][0-9]*\).*/\1/p' include/tensorgl.h)
MAJOR   := $(call VERSION_OF,MAJOR)
VERSION := $(MAJOR).$(call VERSION_OF,MINOR).$(call VERSION_OF,PATCH)
SONAME  := libtensorgl.so.$(MAJOR)

DEPS := libepoxy-dev libegl-dev libgl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri \
        libcmocka-dev glslang-tools spirv-tools pkgconf locales libjson-c-dev
# What `make bench` adds: OpenBLAS, the CPU's own limit, as the GEMM family's reference.
BENCH_DEPS := libopenblas0

ifeq ($(SANITIZE),1)
BUILD    ?= build/sanitize
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD    ?= build
SANFLAGS :=
endif

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifneq ($(CI),)
WARN     += -Werror
endif
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) $(SANFLAGS) -Iinclude -MMD -MP
LIB_CFLAGS := $(ALL_CFLAGS) -fPIC -fvisibility=hidden -DTGL_BUILDING_LIBRARY
LIBS     := -lepoxy -lm -lpthread
LDFLAGS  += $(SANFLAGS)

LIB_SRC  := $(sort $(wildcard src/core/*.c src/cpu/*.c src/gl/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/kernels.o
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
KERNELS  := $(sort $(wildcard glsl/*/*.comp glsl/*/*.glsl))

TEST_COMMON := $(sort $(wildcard tests/common/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c tests/ops/test_*.c))
TEST_BIN := $(patsubst %.c,$(BUILD)/%,$(TEST_SRC))
# The order make check runs them in: the two that take most of a run (kernel compilation) first,
# so the binaries after them fill the other cores meanwhile (scripts/run-tests.sh).
LONG_TESTS := $(BUILD)/tests/ops/test_gemm $(BUILD)/tests/ops/test_attention
TEST_RUN := $(LONG_TESTS) $(filter-out $(LONG_TESTS),$(TEST_BIN))
# make check's: all but test_spirv, which needs every SPIR-V module (make check-full builds them).
TEST_QUICK := $(filter-out $(BUILD)/tests/test_spirv,$(TEST_RUN))
CHECK_SCALE ?= 0.25
NPROC := $(shell nproc 2>/dev/null || echo 1)

.PHONY: all resnet deps print-deps print-tests print-op-tests check check-full check-spirv demo bench tests spirv spirv-test-modules install install-spirv uninstall check-install clean fuzz fuzz-build analyze check-valgrind check-huge soak check-newer-mesa check-torch repro
all: $(BUILD)/libtensorgl.so $(BUILD)/libtensorgl.a $(BUILD)/tensorgl $(BUILD)/resnet $(BUILD)/llama

deps:
	@scripts/install-deps.sh $(DEPS)

# The package list, for the README check in .ci/run.
print-deps:
	@echo '$(DEPS)'
# The test binaries in make check's order, every one or the op suites (for .ci/run's other runs).
print-tests:
	@echo '$(TEST_RUN)'
print-op-tests:
	@echo '$(filter $(BUILD)/tests/ops/%,$(TEST_RUN))'

# Plain `make` without the build packages says so, and how to get them, instead of stopping at
# the first missing header. Checked once per build directory.
BUILD_HEADERS := epoxy/egl.h epoxy/gl.h
$(BUILD)/.headers-found:
	@for h in $(BUILD_HEADERS); do \
	    if ! printf '#include <%s>\n' "$$h" | $(CC) -E -x c - >/dev/null 2>&1; then \
	        echo "tensorgl: <$$h> is missing: the build needs the packages $(DEPS)." >&2; \
	        echo "tensorgl: run 'make deps' (it installs the missing ones with apt), then 'make' again." >&2; \
	        exit 1; \
	    fi; \
	done
	@mkdir -p $(@D) && touch $@

$(LIB_OBJ) $(CLI_OBJ) $(CLI_MODEL_OBJ): | $(BUILD)/.headers-found

$(BUILD)/gen/kernels.c: $(KERNELS) scripts/embed-kernels.sh
	@mkdir -p $(@D)
	scripts/embed-kernels.sh glsl $@

$(BUILD)/obj/gen/kernels.o: $(BUILD)/gen/kernels.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/obj/src/cli/%.o: src/cli/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -Iexamples -c $< -o $@

# `tensorgl bench models` runs the examples' models (their readers: GGUF, safetensors with json-c).
CLI_MODEL_SRC := examples/llama_model.c examples/resnet_model.c examples/gguf.c examples/safetensors.c
CLI_MODEL_OBJ := $(CLI_MODEL_SRC:%.c=$(BUILD)/obj/%.o)
$(BUILD)/obj/examples/%.o: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/libtensorgl.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS) -o $@.$(VERSION) $^ $(LIBS)
	ln -sf libtensorgl.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(BUILD)/libtensorgl.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# The command links the static library: it also uses internal symbols (kernel listing).
$(BUILD)/tensorgl: $(CLI_OBJ) $(CLI_MODEL_OBJ) $(BUILD)/libtensorgl.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_MODEL_OBJ) $(BUILD)/libtensorgl.a -ljson-c $(LIBS)

# The helpers every test links, compiled once (not once per test binary).
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/obj/%.o)
.SECONDARY: $(TEST_COMMON_OBJ) # made by a pattern rule only: kept, not deleted as intermediates
$(BUILD)/obj/tests/common/%.o: tests/common/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -Itests/common -c $< -o $@

# Tests link the static library so they can reach the internal test hooks.
$(BUILD)/tests/%: tests/%.c $(TEST_COMMON_OBJ) $(BUILD)/libtensorgl.a tests/common/testing.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -Itests/common $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) \
	    $(BUILD)/libtensorgl.a -lcmocka $(LIBS)

# test_safetensors reads files through examples/safetensors.c (json-c).
$(BUILD)/tests/test_safetensors: tests/test_safetensors.c examples/safetensors.c examples/safetensors.h \
                                 $(TEST_COMMON_OBJ) $(BUILD)/libtensorgl.a tests/common/testing.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -Itests/common -Iexamples $(LDFLAGS) -o $@ $< examples/safetensors.c \
	    $(TEST_COMMON_OBJ) $(BUILD)/libtensorgl.a -lcmocka -ljson-c $(LIBS)

tests: $(TEST_BIN)

# test_gguf reads files through examples/gguf.c.
$(BUILD)/tests/test_gguf: tests/test_gguf.c examples/gguf.c examples/gguf.h $(TEST_COMMON_OBJ) $(BUILD)/libtensorgl.a \
                          tests/common/testing.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -Itests/common -Iexamples $(LDFLAGS) -o $@ $< examples/gguf.c \
	    $(TEST_COMMON_OBJ) $(BUILD)/libtensorgl.a -lcmocka $(LIBS)

# test_llama runs the example built beside it.
$(BUILD)/tests/test_llama: | $(BUILD)/llama

# test_cli runs the command built beside it.
$(BUILD)/tests/test_cli: | $(BUILD)/tensorgl

# The SPIR-V modules of TGL_SHADER=spirv (src/gl/gl_spirv.c), one per kernel variant; rebuilt
# when the kernels or the library sources (which list the variants) change. Sanitizer flags do
# not change them, so every build directory shares build/tensorgl-spirv.
# KERNEL_PART=K/N (make spirv, check-spirv, check-full): only every N-th variant of each kernel
# from its K-th (`tensorgl kernels --part`) is built into a module and through glslangValidator,
# plus the modules test_spirv loads; .ci/run takes a different quarter each run, the whole set
# being more than its time allows. The part a module directory holds is in its file `part`, and
# a directory holding another part than asked for is built again.
SPIRV_DIR := build/tensorgl-spirv
KERNEL_PART ?= all
spirv:
	@if [ "$$(cat $(SPIRV_DIR)/part 2>/dev/null)" != "$(KERNEL_PART)" ]; then rm -f $(SPIRV_DIR)/tensorgl-spirv.txt; fi
	@$(MAKE) --no-print-directory $(SPIRV_DIR)/tensorgl-spirv.txt
$(SPIRV_DIR)/tensorgl-spirv.txt: $(KERNELS) $(LIB_SRC) src/cli/cmd_kernels.c scripts/build-spirv.sh
	@$(MAKE) --no-print-directory $(BUILD)/tensorgl
	scripts/build-spirv.sh $(BUILD) $(SPIRV_DIR) $(KERNEL_PART)
# For a part: the modules test_spirv asks for and the part lacks (TGL_DEBUG logs each one it
# does not find), added so that it can check every module it loads is found. Its run here
# fails for want of them; its output is only read for their names.
spirv-test-modules:
ifneq ($(KERNEL_PART),all)
	@TGL_DEBUG=1 TGL_SPIRV_DIR=$(CURDIR)/$(SPIRV_DIR) $(BUILD)/tests/test_spirv 2>&1 | \
	    sed -n 's/.*no SPIR-V module (\([^)]*\.spv\)).*/\1/p' | sort -u | \
	    xargs -r scripts/build-spirv.sh --add $(BUILD) $(SPIRV_DIR)
endif

# The demo links the shared library, as a user's program would.
$(BUILD)/demo: examples/demo.c $(BUILD)/libtensorgl.so
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,'$$ORIGIN' -ltensorgl -lm

# The ResNet-18 example and its safetensors reader (json-c parses the header), likewise.
$(BUILD)/resnet: examples/resnet.c examples/resnet_model.c examples/resnet_model.h examples/safetensors.c \
    examples/safetensors.h $(BUILD)/libtensorgl.so
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ examples/resnet.c examples/resnet_model.c examples/safetensors.c -L$(BUILD) \
	    -Wl,-rpath,'$$ORIGIN' -ltensorgl -ljson-c -lm

# The Llama-architecture example and its GGUF reader, likewise.
$(BUILD)/llama: examples/llama.c examples/llama_model.c examples/llama_model.h examples/gguf.c examples/gguf.h \
    $(BUILD)/libtensorgl.so
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ examples/llama.c examples/llama_model.c examples/gguf.c -L$(BUILD) \
	    -Wl,-rpath,'$$ORIGIN' -ltensorgl -lm

# ResNet-18 on random weights at 64x64, batch 2, saved as safetensors and run again from the file:
# GL and the CPU backend must give the same top-5 (the program's exit status) both times.
resnet: deps $(BUILD)/resnet
	$(BUILD)/resnet --size 64 --batch 2 --save $(BUILD)/resnet18-random.safetensors
	$(BUILD)/resnet --size 64 --batch 2 --weights $(BUILD)/resnet18-random.safetensors

# Under the sanitizers, a failed huge allocation must return NULL (the out-of-memory tests make
# one on purpose), and leaks inside the GL driver (Mesa, LLVM) are not ours to report.
# intercept_tls_get_addr=0: the __tls_get_addr interceptor of GCC 12's runtime (Debian 12) takes a
# dynamic TLS block that happens to start 16 bytes past a 4 KiB boundary for one with glibc
# 2.19's header and reads the two words before it as the block's range (google/sanitizers#1322);
# LeakSanitizer's tracer then faults scanning that range at exit ("Tracer caught signal 11",
# "LeakSanitizer has encountered a fatal error") after every test passed. Mesa's threads use
# dynamic TLS, so CI hit it now and then (test_gemm after all 10 of its tests passed, 2026-11-24).
SAN_OPTIONS := allocator_may_return_null=1:detect_leaks=1:intercept_tls_get_addr=0
ifeq ($(SANITIZE),1)
check: export ASAN_OPTIONS = $(SAN_OPTIONS):abort_on_error=0
check: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
check: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
check-full: export ASAN_OPTIONS = $(SAN_OPTIONS):abort_on_error=0
check-full: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
check-full: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
endif
# make check: what a change needs before it is committed, in about 5 minutes on two cores with
# empty caches: the build (one job per core), docs/api.md against the header, and every test
# binary but test_spirv at TGL_TEST_SCALE=$(CHECK_SCALE) (a seeded quarter of each sweep of
# kernel configurations and random cases; tests/common/testing.h). Results print as each binary
# ends, and what is still running every 30 s.
check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all tests
	scripts/api-reference.sh --check
	TGL_TEST_SCALE=$(CHECK_SCALE) scripts/run-tests.sh $(BUILD) $(TEST_QUICK)

# make check-full (CI): the exhaustive run: every SPIR-V module built (about 10 minutes here),
# every kernel variant through glslangValidator (GL and ES; the plain build only: the kernel text
# does not depend on sanitizer flags), and the whole suite at full scale, test_spirv included.
check-full: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all tests
	@$(MAKE) --no-print-directory spirv
	@$(MAKE) --no-print-directory spirv-test-modules
ifneq ($(SANITIZE),1)
	scripts/validate-kernels.sh $(BUILD) $(KERNEL_PART)
endif
	scripts/api-reference.sh --check
	scripts/run-tests.sh $(BUILD) $(TEST_RUN)

# make check-spirv: what make check-full adds to make check: every SPIR-V module built, every
# kernel variant through glslangValidator, and test_spirv. CI runs make check and then this with
# KERNEL_PART=K/4 (a quarter of the variants).
check-spirv: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all tests
	@$(MAKE) --no-print-directory spirv
	@$(MAKE) --no-print-directory spirv-test-modules
	scripts/validate-kernels.sh $(BUILD) $(KERNEL_PART)
	scripts/run-tests.sh $(BUILD) $(BUILD)/tests/test_spirv

demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/demo $(BUILD)/llama
	$(BUILD)/demo
	$(BUILD)/llama --random q4_0 --backend both

# The standard set on every available backend: the table on stdout, the figures in JSON, and
# (where python3 is installed) the chart drawn from them.
bench: deps
	@scripts/install-deps.sh $(BENCH_DEPS)
	@$(MAKE) --no-print-directory all
	$(BUILD)/tensorgl bench --json $(BUILD)/bench.json
	@if command -v python3 >/dev/null; then python3 bench/chart.py $(BUILD)/bench.json $(BUILD)/bench.svg; fi

# libFuzzer harnesses (tests/fuzz/fuzz_*.c) over a clang build of the library with ASan + UBSan
# in build/fuzz/. `make fuzz` runs each for FUZZ_TIME seconds on its corpus (tests/fuzz/corpus/NAME,
# new finds go to build/fuzz/corpus-NAME) and prints libFuzzer's final statistics.
FUZZ_TIME  ?= 60
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZERS    := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
fuzz-build: deps
	@scripts/install-deps.sh clang libclang-rt-dev  # libFuzzer and the sanitizer runtimes are only Recommends of clang
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="-O1 -g" \
	    SANFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" build/fuzz/libtensorgl.a
	@$(MAKE) --no-print-directory $(FUZZERS)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libtensorgl.a
	clang -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Iinclude -Isrc \
	    -o $@ $< build/fuzz/libtensorgl.a $(LIBS)

build/fuzz/fuzz_safetensors: tests/fuzz/fuzz_safetensors.c examples/safetensors.c examples/safetensors.h
	clang -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Iexamples \
	    -o $@ $< examples/safetensors.c -ljson-c

build/fuzz/fuzz_gguf: tests/fuzz/fuzz_gguf.c examples/gguf.c examples/gguf.h
	clang -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Iexamples \
	    -o $@ $< examples/gguf.c

fuzz: fuzz-build
	@for f in $(FUZZERS); do name=$${f##*/fuzz_}; mkdir -p build/fuzz/corpus-$$name; \
	    echo "== $$f ($(FUZZ_TIME) s)"; \
	    ASAN_OPTIONS=$(SAN_OPTIONS) LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	    $$f -max_total_time=$(FUZZ_TIME) -timeout=60 -artifact_prefix=build/fuzz/$$name- -rss_limit_mb=4096 -print_final_stats=1 \
	        build/fuzz/corpus-$$name tests/fuzz/corpus/$$name > build/fuzz/$$name.log 2>&1; rc=$$?; \
	    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]' build/fuzz/$$name.log; \
	    if [ $$rc -ne 0 ]; then tail -60 build/fuzz/$$name.log; exit 1; fi; done

# Ops on 2^HUGE_LOG2 floats (default 29: 2 GiB per array) checked element by element; needs
# ~6.5 GiB of memory, so it is not part of `make check`.
HUGE_LOG2 ?= 29
# A standalone GL program (no tensorgl) for the NVIDIA upload-ordering question
# (tests/repro/upload_order.c says how to run it; docs/internals.md has its results).
repro: deps
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/upload_order tests/repro/upload_order.c $(LIBS)

check-huge: deps
	@$(MAKE) --no-print-directory $(BUILD)/libtensorgl.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $(BUILD)/huge_ops tests/huge/huge_ops.c $(BUILD)/libtensorgl.a $(LIBS)
	$(BUILD)/huge_ops $(HUGE_LOG2)

# A randomized mix of every op, GL against the CPU oracle, for SOAK_SECONDS; checks results and
# that resident memory does not grow after the warm-up (tests/soak/soak.c).
SOAK_SECONDS ?= 1800
soak: deps
	@$(MAKE) --no-print-directory $(BUILD)/libtensorgl.a
	$(CC) $(ALL_CFLAGS) -Isrc -Itests/common $(LDFLAGS) -o $(BUILD)/soak tests/soak/soak.c $(TEST_COMMON) \
	    $(BUILD)/libtensorgl.a -lcmocka $(LIBS)
	$(BUILD)/soak $(SOAK_SECONDS)

# Static analysis (cppcheck, clang-tidy with .clang-tidy): no finding allowed.
analyze: deps
	@scripts/install-deps.sh cppcheck clang-tidy
	@$(MAKE) --no-print-directory $(BUILD)/gen/kernels.c
	scripts/analyze.sh $(BUILD)

# The suites' CPU parts under valgrind memcheck (GL is skipped: llvmpipe under valgrind would
# take hours and its JIT is not ours to check). tests/valgrind.supp holds the reports from
# outside tensorgl (the dynamic loader).
VALGRIND_TESTS := $(BUILD)/tests/test_memory $(BUILD)/tests/test_open $(BUILD)/tests/test_trace
check-valgrind: deps
	@scripts/install-deps.sh valgrind
	@$(MAKE) --no-print-directory $(VALGRIND_TESTS)
	@for t in $(VALGRIND_TESTS); do echo "== valgrind $$t"; \
	    TGL_TEST_CPU_ONLY=1 TGL_BACKEND=cpu valgrind -q --error-exitcode=1 --leak-check=full --suppressions=tests/valgrind.supp \
	        --errors-for-leak-kinds=definite $$t > $(BUILD)/valgrind-$${t##*/}.log 2>&1 \
	        || { tail -40 $(BUILD)/valgrind-$${t##*/}.log; exit 1; }; \
	    grep -E '^\[  (PASSED|FAILED|SKIPPED)' $(BUILD)/valgrind-$${t##*/}.log; done

# Both backends against PyTorch (Debian's, on the CPU) on random cases of the ops whose
# semantics are PyTorch's: shapes, refusals, values and indices (tests/torch/check_torch.py).
check-torch: deps
	@scripts/install-deps.sh python3-torch python3-numpy
	@$(MAKE) --no-print-directory $(BUILD)/libtensorgl.so
	/usr/bin/python3 tests/torch/check_torch.py --lib $(BUILD)/$(SONAME)

# The suite on a newer Mesa than Debian 12's 22.3: bookworm-backports' Mesa 25, unpacked beside
# the system's (never installed over it), as its llvmpipe and as zink over its lavapipe
# (scripts/check-newer-mesa.sh says what is checked where).
check-newer-mesa: deps
	@$(MAKE) --no-print-directory all tests
	scripts/check-newer-mesa.sh $(BUILD) $(TEST_RUN)

# tensorgl.pc is written at install time, so it always names this install's PREFIX/LIBDIR.
# The SPIR-V modules (every kernel variant, minutes to build) only for TGL_SHADER=spirv:
# `make install-spirv`. Into the system's own library directory, as root and not staged, install
# runs ldconfig so programs find libtensorgl.so.0 at once; it prints what else a user needs.
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 644 include/tensorgl.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(BUILD)/libtensorgl.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libtensorgl.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtensorgl.so
	install -m 644 $(BUILD)/libtensorgl.a $(DESTDIR)$(LIBDIR)/
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: tensorgl\nDescription: %s\nVersion: %s\nLibs: -L$${libdir} -ltensorgl\nLibs.private: %s\nRequires.private: epoxy\nCflags: -I$${includedir}\n' \
	    '$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' \
	    'Tensor operations as OpenGL compute shaders, with a CPU reference backend' \
	    '$(VERSION)' '-lm -lpthread' > $(DESTDIR)$(LIBDIR)/pkgconfig/tensorgl.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/tensorgl.pc
	install -m 755 $(BUILD)/tensorgl $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 docs/tensorgl.1 $(DESTDIR)$(MANDIR)/man1/
	@echo "tensorgl: installed in $(DESTDIR)$(PREFIX). Next:"
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	    ldconfig && echo "  (ldconfig has run: the loader finds libtensorgl.so.0 in a system prefix)"; \
	else \
	    echo "  sudo ldconfig                     # once, for a system prefix: the loader finds libtensorgl.so.0"; \
	fi
	@echo "  export PKG_CONFIG_PATH=$(LIBDIR)/pkgconfig LD_LIBRARY_PATH=$(LIBDIR)   # a prefix outside their paths"
	@echo "  cc app.c \$$(pkg-config --cflags --libs tensorgl)   # docs/examples/ has programs to start from"
	@echo "  tensorgl info; tensorgl warmup    # the device, then its kernels compiled ahead into the cache"
	@echo "  make install-spirv                # only for TGL_SHADER=spirv: the SPIR-V modules"

install-spirv: spirv
	install -d $(DESTDIR)$(LIBDIR)/tensorgl-spirv
	cp $(SPIRV_DIR)/*.spv $(SPIRV_DIR)/tensorgl-spirv.txt $(DESTDIR)$(LIBDIR)/tensorgl-spirv/
	chmod 644 $(DESTDIR)$(LIBDIR)/tensorgl-spirv/*

# Exactly the files install and install-spirv wrote (directories stay: they may hold other
# packages' files).
uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/tensorgl.h $(DESTDIR)$(LIBDIR)/libtensorgl.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libtensorgl.so $(DESTDIR)$(LIBDIR)/libtensorgl.a \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/tensorgl.pc $(DESTDIR)$(BINDIR)/tensorgl $(DESTDIR)$(MANDIR)/man1/tensorgl.1
	rm -rf $(DESTDIR)$(LIBDIR)/tensorgl-spirv

check-install: deps
	scripts/check-install.sh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
