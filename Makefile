# nucatrace build.  `make` builds everything, `make test` runs the CPU
# tests (what CI runs), `make test-gpu` and `make bench` need a GPU.
VERSION    := 0.1.0
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
CC         ?= gcc
BUILD      ?= build
PREFIX     ?= /usr/local
DESTDIR    ?=

# Warnings are errors in CI (CI=true) and wherever WERROR=1.
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WERROR_FLAG := -Werror
endif

CPPFLAGS += -I. -Icore -I$(CUDA_HOME)/include -D_GNU_SOURCE -DNT_VERSION='"$(VERSION)"'
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter $(WERROR_FLAG) $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
LDLIBS   += -lsqlite3 -lelf -lzstd -lm -ldl -lpthread

# Device code: native SASS for Turing..Hopper, PTX for anything newer.
# (CUDA 13's nvcc cannot target compute capability 7.0/7.2.)
GENCODE  ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
            -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -lineinfo

# core/ in layers, lowest first: a file includes headers of its own layer
# and of the layers before it, never after (tests/lint/layers.sh checks).
CORE_LAYERS := util map gpu trace analysis report
CORE_SRC   := $(foreach l,$(CORE_LAYERS),$(wildcard core/$(l)/*.c))
CMD_SRC    := $(wildcard calibrate/*.c reports/*.c interposer/cmd_*.c)
CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ    := $(CMD_SRC:%.c=$(BUILD)/%.o)
KERNEL_OBJ := $(BUILD)/kernels/probe_blob.o $(BUILD)/kernels/load_blob.o $(BUILD)/kernels/localize_blob.o
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# Debian packages the build and the tests need (apt-get, as root or with sudo).
DEB_PACKAGES := make gcc libc6-dev libsqlite3-dev libelf-dev libzstd-dev uthash-dev libcmocka-dev sqlite3 python3 xz-utils

.PHONY: deps deps-html deps-fuzz bench-report bench-host all test test-lint test-unit test-cli test-html test-gpu bench asan \
	fuzz fuzz-build fuzz-smoke fuzz-harnesses install demo clean
all: $(BUILD)/nucatrace $(BUILD)/libnucatrace.so

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ireports $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/libntcore.a: $(CORE_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/kernels/probe.fatbin: kernels/probe.cu kernels/probe.h kernels/sreg.cuh
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GENCODE) -Ikernels -fatbin -o $@ $<

$(BUILD)/kernels/probe_blob.o: kernels/blob.S $(BUILD)/kernels/probe.fatbin
	$(CC) -c -DBLOB_SYMBOL=nt_probe_fatbin -DBLOB_FILE='"$(BUILD)/kernels/probe.fatbin"' -o $@ $<

# The load kernel of calibrate --stability, a module of its own.
$(BUILD)/kernels/load.fatbin: kernels/load.cu kernels/load.h kernels/sreg.cuh
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GENCODE) -Ikernels -fatbin -o $@ $<

$(BUILD)/kernels/load_blob.o: kernels/blob.S $(BUILD)/kernels/load.fatbin
	$(CC) -c -DBLOB_SYMBOL=nt_load_fatbin -DBLOB_FILE='"$(BUILD)/kernels/load.fatbin"' -o $@ $<

# The kernels of localize --eval, around the public probe in include/.
$(BUILD)/kernels/localize.fatbin: kernels/localize_eval.cu kernels/localize_eval.h kernels/sreg.cuh \
		include/nucatrace/localize.cuh include/nucatrace/localize_table.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GENCODE) -Ikernels -Iinclude -fatbin -o $@ $<

$(BUILD)/kernels/localize_blob.o: kernels/blob.S $(BUILD)/kernels/localize.fatbin
	$(CC) -c -DBLOB_SYMBOL=nt_loc_fatbin -DBLOB_FILE='"$(BUILD)/kernels/localize.fatbin"' -o $@ $<

# The interposer: position-independent copies of the core and the
# interposer sources, everything hidden but InitializeInjection.
SO_SRC     := $(filter-out interposer/cmd_%.c,$(wildcard interposer/*.c)) $(wildcard interposer/blocks/*.c)
PIC_CORE   := $(CORE_SRC:%.c=$(BUILD)/pic/%.o)
PIC_SO     := $(SO_SRC:%.c=$(BUILD)/pic/%.o)
PICFLAGS   := -fPIC -fvisibility=hidden

# Preloaded into programs that are not built with sanitizers: the
# library never is, also in `make asan` (the core's tests cover it there).
NOSAN = $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(1))
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iinterposer $(call NOSAN,$(CFLAGS)) $(PICFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/libntcore_pic.a: $(PIC_CORE)
	rm -f $@
	$(AR) rcs $@ $^

# Block callbacks patched into every instrumented kernel (Compute Sanitizer).
$(BUILD)/kernels/patch.fatbin: kernels/patch.cu kernels/blockrec.h
	@mkdir -p $(dir $@)
	$(NVCC) --compile-as-tools-patch -fatbin -Ikernels -o $@ $< \
		-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=sm_90

$(BUILD)/kernels/patch_blob.o: kernels/blob.S $(BUILD)/kernels/patch.fatbin
	$(CC) -c -fPIC -DBLOB_SYMBOL=nt_patch_fatbin -DBLOB_FILE='"$(BUILD)/kernels/patch.fatbin"' -o $@ $<

# SQLite and zstd are linked in, their symbols hidden: the program may
# carry its own (another version, other options), and ours must not meet
# it.
# (Debian's libelf.a is not position-independent: libelf stays shared.)
SO_LDLIBS := -Wl,--exclude-libs,ALL -Wl,-Bstatic -lsqlite3 -lzstd -Wl,-Bdynamic -lelf -lm -ldl -lpthread
$(BUILD)/libnucatrace.so: $(PIC_SO) $(BUILD)/kernels/patch_blob.o $(BUILD)/libntcore_pic.a interposer/libnucatrace.map
	$(CC) $(call NOSAN,$(LDFLAGS)) -shared -Wl,--version-script=interposer/libnucatrace.map -Wl,-z,defs \
		-o $@ $(PIC_SO) $(BUILD)/kernels/patch_blob.o $(BUILD)/libntcore_pic.a $(SO_LDLIBS)

$(BUILD)/nucatrace: $(BUILD)/nucatrace.o $(BUILD)/usage.o $(CMD_OBJ) $(KERNEL_OBJ) $(BUILD)/libntcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libntcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -MMD -MP $(LDFLAGS) -o $@ $(filter %.c,$^) \
		$(filter %.o,$^) $(filter %.a,$^) -lcmocka $(LDLIBS)

# The interposer's pure parts, tested on the CPU like the core.
UNIT_IPOSER_OBJ := $(BUILD)/interposer/blocks/recpool.o $(BUILD)/interposer/config.o $(BUILD)/interposer/blocks/inflight.o \
                   $(BUILD)/interposer/summary.o
$(BUILD)/tests/test_recpool: $(BUILD)/interposer/blocks/recpool.o
$(BUILD)/tests/test_config: $(BUILD)/interposer/config.o
$(BUILD)/tests/test_inflight: $(BUILD)/interposer/blocks/inflight.o
$(BUILD)/tests/test_summary: $(BUILD)/interposer/summary.o

# Cubins of known kernels for the cubin parser's tests (test_cubin.c).
TEST_CUBINS := $(BUILD)/tests/kernels_sm80.cubin $(BUILD)/tests/kernels_sm90.cubin \
               $(BUILD)/tests/kernels_cdp_sm90.cubin $(BUILD)/tests/kernels_devrt_sm90.cubin \
               $(BUILD)/tests/kernels_state_sm90.cubin $(BUILD)/tests/kernels_stateless_sm90.cubin
$(BUILD)/tests/kernels_sm%.cubin: tests/unit/cubins/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_$* -o $@ $<
$(BUILD)/tests/kernels_cdp_sm90.cubin: tests/unit/cubins/cdp.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -rdc=true -arch=sm_90 -o $@ $<
$(BUILD)/tests/kernels_state_sm90.cubin: tests/unit/cubins/state.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_90 -o $@ $<
$(BUILD)/tests/kernels_stateless_sm90.cubin: tests/unit/cubins/stateless.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_90 -o $@ $<
$(BUILD)/tests/kernels_devrt_sm90.cubin: tests/unit/cubins/devrt.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -rdc=true -arch=sm_90 -o $@ $<

# Fault injection: a libcuda whose every call fails (tests/fault).
FAKECUDA := $(BUILD)/tests/libfakecuda.so $(BUILD)/tests/libfakecuda-old.so \
            $(BUILD)/tests/libfakesanitizer.so $(BUILD)/tests/print_errno $(BUILD)/tests/cuda_prog \
            $(BUILD)/tests/fake_app $(patsubst %,$(BUILD)/tests/fake_mod%.cubin,1 2 3)
# The simulated GPU's modules as cubins (FAKESANITIZER_CUBINS).
$(BUILD)/tests/fake_mod%.cubin: tests/fault/cubins/fake_modules.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_90 -DMOD=$* -o $@ $<
$(BUILD)/tests/fake_app: tests/fault/fake_app.c
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< -ldl -lpthread
$(BUILD)/tests/cuda_prog: tests/fault/cuda_prog.c
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< -ldl
$(BUILD)/tests/print_errno: tests/fault/print_errno.c
	@mkdir -p $(dir $@)
	$(CC) -o $@ $<
# The stand-in sanitizer, and with FAKESANITIZER_GPU=1 a simulated GPU.
$(BUILD)/tests/libfakesanitizer.so: tests/fault/fakesanitizer.c tests/fault/fakesanitizer_gpu.c \
		interposer/blocks/sanitizer.def interposer/blocks/sanitizer_abi.h kernels/blockrec.h tests/fault/fakegpu.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Wno-unused-parameter -shared -fPIC -o $@ $(filter %.c,$^) -lpthread
$(BUILD)/tests/libfakecuda.so: tests/fault/fakecuda.c tests/fault/fakecuda_gpu.c core/gpu/cudrv.def tests/fault/fakegpu.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Wno-missing-prototypes -shared -fPIC -o $@ $(filter %.c,$^) -ldl
$(BUILD)/tests/libfakecuda-old.so: tests/fault/fakecuda.c core/gpu/cudrv.def
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DDROP_ONE -Wno-missing-prototypes -shared -fPIC -o $@ $< -ldl

test: test-lint test-unit test-cli
test-lint:
	@CORE_LAYERS='$(CORE_LAYERS)' tests/lint/layers.sh
test-unit: $(UNIT_BIN) $(TEST_CUBINS)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; NT_TEST_DATA=tests/data NT_TEST_CUBIN_DIR=$(BUILD)/tests $$t; done
test-cli: $(BUILD)/nucatrace $(BUILD)/libnucatrace.so $(FAKECUDA) $(BUILD)/tests/gen_trace $(BUILD)/tests/kernels_state_sm90.cubin
	@NUCATRACE=$(BUILD)/nucatrace FAKECUDA_DIR=$(BUILD)/tests tests/cli/run.sh
# The --html page in headless Chromium (apt-get install chromium); not in `test`.
test-html: $(BUILD)/nucatrace $(BUILD)/tests/gen_trace
	@NUCATRACE=$(BUILD)/nucatrace GEN=$(BUILD)/tests/gen_trace tests/html/check.sh

# Programs the GPU tests trace (tests/gpu/progs): nvcc's default static cudart.
# Also: the same program with shared cudart, and one on the driver API alone.
# (validate.cu is built on its own, below, for more GPUs.)
GPU_PROGS := $(patsubst tests/gpu/progs/%.cu,$(BUILD)/tests/gpu/%,\
                 $(filter-out tests/gpu/progs/validate.cu,$(wildcard tests/gpu/progs/*.cu))) \
             $(BUILD)/tests/gpu/blocks_shared $(BUILD)/tests/gpu/drvapi $(BUILD)/tests/gpu/graphs_nordc
$(BUILD)/tests/gpu/%: tests/gpu/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -o $@ $<
$(BUILD)/tests/gpu/triad $(BUILD)/tests/gpu/stream_sweep: tests/gpu/progs/triad.cuh
# decode's swapdrv mode calls the driver API as nucatrace's twins do
$(BUILD)/tests/gpu/decode: tests/gpu/progs/decode.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
# Device-side launches (dynamic parallelism, device graph launch) need
# relocatable device code and the device runtime.
$(BUILD)/tests/gpu/graphs_device: tests/gpu/progs/graphs_device.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -rdc=true -gencode arch=compute_90,code=sm_90 -o $@ $< -lcudadevrt
$(BUILD)/tests/gpu/graphs_nordc: tests/gpu/progs/graphs_device.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -o $@ $<
$(BUILD)/tests/gpu/blocks_shared: tests/gpu/progs/blocks.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -gencode arch=compute_90,code=sm_90 -o $@ $<
$(BUILD)/tests/gpu/drvapi: tests/gpu/progs/drvapi.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# The report's validation workloads (tests/gpu/progs/validate.cu, docs/validation.md).
$(BUILD)/validate: tests/gpu/progs/validate.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=compute_90 -o $@ $<

# A CUDA injection library that attaches to the Compute Sanitizer with
# chosen callback domains and nothing patched (what attaching costs).
$(BUILD)/tests/gpu/subcost.so: tests/gpu/subcost.c tests/gpu/subscribe.h interposer/blocks/sanitizer_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -shared -fPIC -Wall -Wextra -o $@ $< -ldl

# The same, printing every graphs callback (exec handles, launch ids, grid
# ids): what the interposer's graph handling rests on.
$(BUILD)/tests/gpu/graphlog.so: tests/gpu/graphlog.c tests/gpu/subscribe.h interposer/blocks/sanitizer_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -shared -fPIC -Wall -Wextra -o $@ $< -ldl

# Preloaded: a program's graph launches routed through it (dlsym's
# answers for cuGetProcAddress, and the driver's names), counted.
$(BUILD)/tests/gpu/launchhook.so: tests/gpu/launchhook.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -shared -fPIC -Wall -Wextra -o $@ $< -ldl

# A stand-in for libsanitizer-public.so (NUCATRACE_SANITIZER_LIB) that
# times each entry point and callback: where the interposer's host time goes.
$(BUILD)/tests/gpu/santime.so: tests/gpu/santime.c interposer/blocks/sanitizer_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -shared -fPIC -Wall -Wextra -o $@ $< -ldl

# LD_PRELOAD it beside libnucatrace.so; kill -USR2 writes every thread's
# stack (for hung GPU checks: the device has no debugger).
$(BUILD)/tests/gpu/stackdump.so: tests/gpu/stackdump.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -shared -fPIC -Wall -Wextra -o $@ $< -ldl

# Why the block-exit patch site costs what it does (tests/gpu/sitecost.sh
# runs them): an injection library that patches the entry and/or exit site
# with callbacks of its own, those callbacks, and a program of PAPER.md's
# table's kernels.  GPU machine only (the library is built against the
# Sanitizer's own headers); make bench uses them (tests/bench/sites.py).
.PHONY: sitecost
sitecost: $(BUILD)/tests/gpu/sitecost.so $(BUILD)/tests/gpu/sitecost_patch.fatbin $(BUILD)/tests/gpu/sitecost
$(BUILD)/tests/gpu/sitecost.so: tests/gpu/sitecost.c tests/gpu/sitecost.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(CUDA_HOME)/compute-sanitizer/include -O2 -shared -fPIC -Wall -Wextra -o $@ $< -ldl
$(BUILD)/tests/gpu/sitecost_patch.fatbin: tests/gpu/sitecost_patch.cu tests/gpu/sitecost.h kernels/sreg.cuh
	@mkdir -p $(dir $@)
	$(NVCC) --compile-as-tools-patch -fatbin -arch=sm_90 -I. -o $@ $<
# (the program itself: the GPU_PROGS pattern rule)
$(BUILD)/tests/gpu/sitecost: tests/gpu/sitecost.h

test-gpu: all $(GPU_PROGS) $(BUILD)/validate $(BUILD)/tests/gpu/stackdump.so $(BUILD)/tests/gpu/subcost.so \
		$(BUILD)/tests/gpu/graphlog.so
	@NUCATRACE=$(BUILD)/nucatrace tests/gpu/run.sh
	@BUILD=$(BUILD) tests/gpu/interposer.sh
	@BUILD=$(BUILD) tests/gpu/validate.sh

# make bench's lockstep rings (tests/bench/interposer.py): how many, and
# the CPUs their main threads and other threads go to once set up
# (MAIN:OTHERS; unpinned on a machine of fewer than 8 CPUs).  5 rings say
# little: none's 1% took 60 (docs/results/2026-12-02-none-vs-bare.md), the
# default's 3% on the GPU-paced loop 12-18 (2026-12-03-default-vs-floor.md)
LOCKSTEP_REPS ?= 5
LOCKSTEP_PIN ?= $(shell [ "$$(nproc)" -ge 8 ] && echo 3:4-7)
bench: all $(GPU_PROGS) $(BUILD)/tests/gpu/subcost.so sitecost bench-report
	@NUCATRACE=$(BUILD)/nucatrace tests/bench/calibrate.sh
	@# what tracing costs a launch per patch site, beside the Compute Sanitizer's floors
	@# (issue 31's goals: --blocks entry at most 2x the triad's native time, 2.5x an
	@# empty 1,024-thread kernel's)
	@BUILD=$(BUILD) python3 tests/bench/sites.py
	@# the default policy on a STREAM-style size sweep against plain (issue 32's goals)
	@BUILD=$(BUILD) python3 tests/bench/stream_sweep.py
	@# block records from the GPU into the trace: the triad loop under all (issue 32's goals)
	@BUILD=$(BUILD) python3 tests/bench/records.py
	@# graph replays of execs made before the window, beside the floor (issue 33's goal)
	@BUILD=$(BUILD) python3 tests/bench/graphs.py --goal decode:default=1.01
	@BUILD=$(BUILD) python3 tests/bench/interposer.py
	@# the eager loop's goals, each run in turns with bare ones (host drift cancels),
	@# host-bound (train-long) and paced by the GPU (train-gpu-long);
	@# sanitizer: the Compute Sanitizer attached by another tool, nothing enabled (the floor);
	@# once set up, every program's main thread on one CPU (LOCKSTEP_PIN, empty: unpinned)
	@BUILD=$(BUILD) python3 tests/bench/interposer.py --lockstep --only train-long,train-gpu-long \
		--configs bare,none,sanitizer,default --goal none=1.01 --goal default=1.03 --reps $(LOCKSTEP_REPS) \
		$(if $(LOCKSTEP_PIN),--pin $(LOCKSTEP_PIN))

# The report's speed over 10 million synthetic block records (CPU only).
$(BUILD)/tests/gen_trace: tests/bench/gen_trace.c $(BUILD)/libntcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
bench-report: $(BUILD)/nucatrace $(BUILD)/tests/gen_trace
	@BUILD=$(BUILD) tests/bench/report.sh

# What the blocks backend's callbacks cost the host per launch (CPU only:
# the simulated GPU runs no kernel, so a launch's time there is ours).
bench-host: all $(FAKECUDA)
	@BUILD=$(BUILD) tests/bench/hostcost.sh

# The CPU tests again under AddressSanitizer and UBSan, in their own tree.
asan:
	$(MAKE) BUILD=build-asan SANFLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' test

# Coverage-guided fuzzing (docs/fuzzing.md): libFuzzer harnesses in
# tests/fuzz/, each with its seed corpus in tests/fuzz/corpus/<harness>/,
# built with Debian's clang under ASan and UBSan in their own tree.
# `make fuzz` runs each for FUZZ_TIME seconds, growing a corpus in
# build-fuzz/corpus/; `make fuzz-smoke` (CI) runs each over its seeds and
# then FUZZ_SMOKE seconds more.  `make deps-fuzz` installs the compiler.
FUZZ_CC      ?= clang-14
FUZZ_BUILD   := build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/*.c)))
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/%)
FUZZ_TIME    ?= 60
FUZZ_SMOKE   ?= 10
FUZZ_OPTS    ?= -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_DEB     := clang-14 libclang-rt-14-dev libfuzzer-14-dev
# the report's formats, which the trace harness writes
FUZZ_FMT_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard reports/fmt_*.c))

fuzz-harnesses: $(FUZZ_BINS)
$(FUZZ_BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_FMT_OBJ) $(BUILD)/libntcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ireports -Itests/fuzz $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_FMT_OBJ) \
		$(BUILD)/libntcore.a $(LDLIBS)

# the harnesses, in a sub-make whose core and formats are built by clang
# with coverage (fuzzer-no-link) and the sanitizers
fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) SANFLAGS='$(FUZZ_SAN) -fsanitize=fuzzer-no-link' \
		fuzz-harnesses

fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes/$$t; \
		echo "== fuzz $$t for $(FUZZ_TIME) s"; \
		$(FUZZ_BUILD)/fuzz/$$t $(FUZZ_OPTS) -max_total_time=$(FUZZ_TIME) \
			-artifact_prefix=$(FUZZ_BUILD)/crashes/$$t/ $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t; \
	done

fuzz-smoke: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_BUILD)/smoke/$$t; mkdir -p $(FUZZ_BUILD)/smoke/$$t; \
		echo "== fuzz-smoke $$t: the seeds, then $(FUZZ_SMOKE) s"; \
		$(FUZZ_BUILD)/fuzz/$$t $(FUZZ_OPTS) -max_total_time=$(FUZZ_SMOKE) \
			-artifact_prefix=$(FUZZ_BUILD)/smoke/ $(FUZZ_BUILD)/smoke/$$t tests/fuzz/corpus/$$t; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/nucatrace $(DESTDIR)$(PREFIX)/bin/nucatrace
	install -d $(DESTDIR)$(PREFIX)/lib/nucatrace
	install -m 755 $(BUILD)/libnucatrace.so $(DESTDIR)$(PREFIX)/lib/nucatrace/libnucatrace.so
	install -d $(DESTDIR)$(PREFIX)/include/nucatrace
	install -m 644 include/nucatrace/localize.cuh include/nucatrace/localize_table.h \
		$(DESTDIR)$(PREFIX)/include/nucatrace

# The main job: calibrate the GPUs here, or show the bundled H200 map.
# With a GPU: calibrate it, then trace an L2-latency-bound test kernel and
# report what slow SMs cost it.  Without: the same, measured on an H200.
demo: all $(BUILD)/tests/gpu/bench
	@# without a GPU, why not is part of the message, not a fatal error before it
	@if $(BUILD)/nucatrace calibrate --list 2>$(BUILD)/demo-gpus.err; then \
		$(BUILD)/nucatrace calibrate && $(BUILD)/nucatrace map show && \
		rm -rf $(BUILD)/demo && mkdir -p $(BUILD)/demo && \
		$(BUILD)/nucatrace run --sample all --output-dir $(BUILD)/demo -- \
			$(BUILD)/tests/gpu/bench chase 20 && \
		$(BUILD)/nucatrace report --html $(BUILD)/demo/report.html $(BUILD)/demo/*.sqlite && \
		echo "the report as a page: $(BUILD)/demo/report.html"; \
	else \
		echo "No usable GPU here ($$(sed -e 's/^nucatrace: //' -e 's/^fatal: //' $(BUILD)/demo-gpus.err | head -n 1)):"; \
		echo "showing a map and a report measured on a real H200 instead."; \
		$(BUILD)/nucatrace map show tests/data/maps/h200-af5e0b1a-a.json; \
		echo; $(BUILD)/nucatrace report tests/data/traces/h200-abc66725-chase.sqlite; \
	fi

# Debian's clang and libFuzzer, for make fuzz and fuzz-smoke.
deps-fuzz:
	@if [ "$$(id -u)" = 0 ]; then s=; else s=sudo; fi; \
	DEBIAN_FRONTEND=noninteractive $$s apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$s apt-get install -y -qq --no-install-recommends $(FUZZ_DEB) >/dev/null

# Debian's chromium, for the browser test of the report's HTML page.
deps-html:
	@if [ "$$(id -u)" = 0 ]; then s=; else s=sudo; fi; \
	DEBIAN_FRONTEND=noninteractive $$s apt-get install -y -qq --no-install-recommends chromium python3 >/dev/null

deps:
	@if [ "$$(id -u)" = 0 ]; then s=; else s=sudo; fi; \
	DEBIAN_FRONTEND=noninteractive $$s apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$s apt-get install -y -qq --no-install-recommends $(DEB_PACKAGES) >/dev/null
	@command -v $(NVCC) >/dev/null || { echo "nvcc not found: install the CUDA toolkit or set CUDA_HOME" >&2; exit 1; }

clean:
	rm -rf build build-asan build-fuzz

-include $(CORE_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(UNIT_IPOSER_OBJ:.o=.d) $(BUILD)/nucatrace.d $(BUILD)/usage.d $(UNIT_BIN:=.d) $(PIC_CORE:.o=.d) $(PIC_SO:.o=.d)

