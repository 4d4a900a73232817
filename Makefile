# slem: square-loss exemplar machine descriptors and cosine retrieval.
#
# Targets:
#   make            build lib/libslem.a, bin/slem-* and the shared library lib/libslem.so
#                   (soname libslem.so.0: the C API of lib/api/slem.h and nothing else,
#                   docs/library.md)
#   make check      install missing Debian packages, build, run every test
#   make check-cores  the golden suites once per OpenBLAS kernel (CORETYPES="Haswell ...")
#   make python-test  the Python package's tests (python/tests, Debian's python3-pytest and
#                   python3-numpy) against the tools and lib/libslem.so
#   make demo       install missing Debian packages, build, run the pipeline on testdata/
#   make install    copy the tools, slem-tune, slem-plot-pr and man pages under $(DESTDIR)$(PREFIX),
#                   and the library: include/slem.h, lib/libslem.so*, lib/libslem.a,
#                   lib/pkgconfig/slem.pc, man3/slem.3, the Python package (PYTHONDIR)
#   make uninstall  remove them again (same PREFIX and DESTDIR)
#   make bench-probe  bin/slem-bench-probe, the BLAS probe of scripts/bench, for a bundle
#                   timed elsewhere (scripts/bench --threads --bindir)
#   make fuzz       run each libFuzzer harness FUZZ_SECONDS (default 30) with clang
#   make clean      remove what the build made
#
# Knobs (make VAR=value):
#   PREFIX=/usr/local      where `make install` puts bin/, share/man/, libexec/slem/,
#                          include/ and lib/ (slem.pc names it)
#   PYTHONDIR=...          where `make install` puts the Python package slem/: Debian's
#                          layout, PREFIX/lib/python3/dist-packages for PREFIX=/usr, else
#                          PREFIX/lib/python3.N/dist-packages (N of /usr/bin/python3)
#   DESTDIR=               staging root for packagers
#   DEBUG=1                -O0 -g3, no optimisation
#   SANITIZE=1             AddressSanitizer + UndefinedBehaviorSanitizer (use with CC=clang
#                          or gcc)
#   BLAS_LIBS=-lopenblas   the CBLAS that GSL's and slem's BLAS calls bind to. It must come
#                          after -lgsl, and is linked --no-as-needed, so that the reference
#                          libgslcblas that libgsl depends on is never the one used
#   LINEAR_LIBS=-llinear   LIBLINEAR (Debian's liblinear-dev), whose dual coordinate descent
#                          trains slem-esvm's exemplar SVMs; slem-esvm --version names it
#   HDF5_LIBS=...          the serial libhdf5 (Debian's libhdf5-dev): default from
#                          `pkg-config --libs hdf5-serial`, else -lhdf5_serial; HDF5_CFLAGS
#                          likewise (--cflags); lib/formats/fmt_hdf5.c reads FILE.h5:DATASET
#   CORETYPES="Haswell SkylakeX Cooperlake Zen Prescott Sandybridge"
#                          the OpenBLAS kernels make check-cores runs its suites under
#   CC=cc  CFLAGS=...  LDFLAGS=...

PREFIX    ?= /usr/local
DESTDIR   ?=
BLAS_LIBS ?= -lopenblas
LINEAR_LIBS ?= -llinear
CC        ?= cc
HDF5_CFLAGS ?= $(shell pkg-config --cflags hdf5-serial 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS ?= $(shell pkg-config --libs hdf5-serial 2>/dev/null || echo -lhdf5_serial)
# the tools load libhdf5 when they first open an HDF5 file (lib/formats/fmt_hdf5.c), by the
# SONAME of the library HDF5_LIBS names; only the tests that write HDF5 files link it
HDF5_SO   = $(firstword $(wildcard $(patsubst -L%,%/lib$(patsubst -l%,%,$(filter -l%,$(HDF5_LIBS))).so,$(filter -L%,$(HDF5_LIBS)))) $(shell $(CC) -print-file-name=lib$(patsubst -l%,%,$(filter -l%,$(HDF5_LIBS))).so))
ifndef HDF5_SONAME
HDF5_SONAME := $(shell objdump -p "$(HDF5_SO)" 2>/dev/null | awk '/SONAME/ { print $$2 }')
endif

OPT       := -O2
ifeq ($(DEBUG),1)
OPT       := -O0 -g3
endif
SAN       :=
ifeq ($(SANITIZE),1)
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

CFLAGS    ?= $(OPT) -g
ALL_CFLAGS = -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter $(SAN) $(CFLAGS) $(ALL_CPPFLAGS) $(HDF5_CFLAGS) $(if $(HDF5_SONAME),-DSLEM_HDF5_SONAME='"$(HDF5_SONAME)"') $(CPPFLAGS)
ALL_LDFLAGS = $(SAN) $(LDFLAGS)
LIBS      = $(LINEAR_LIBS) -lgsl -Wl,--push-state,--no-as-needed $(BLAS_LIBS) -Wl,--pop-state -lcjson -lpng -lm -lpthread -ldl
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

# lib/ is one folder per layer, lowest first (docs/layout.md; tests/layers.sh refuses an
# include that goes up a layer or round a circle). Headers are included by their bare name
# and found through one -I per folder, so a file keeps its includes when it changes folder.
LIB_DIRS  = io linalg formats encode search rank eval report api
LIB_HDR   = $(wildcard lib/*/*.h)
ALL_CPPFLAGS = $(LIB_DIRS:%=-Ilib/%)
# esvm_rand.c defines the C library's rand() and srand() (lib/encode/esvm_rand.h): linked
# into slem-esvm and check_esvm only, never into libslem.a
RAND_OBJ  = build/lib/encode/esvm_rand.o
LIB_SRC   = $(filter-out lib/encode/esvm_rand.c,$(wildcard lib/*/*.c))
LIB_OBJ   = $(LIB_SRC:lib/%.c=build/lib/%.o)
# libslem.so (docs/library.md, "Building and linking"):
# The same sources as libslem.a (esvm_rand.c neither), compiled again -fPIC
# -fvisibility=hidden into build/pic/, so that libslem.a and the tools keep their objects;
# linked with the same LIBS. What it exports: the functions lib/api/slem.h declares, which
# it declares with default visibility (#pragma GCC visibility), and the version script made
# from that header by scripts/api-map.sh (tests/so-symbols.sh checks both). The version is
# the header's SLEM_VERSION; the soname carries its major number.
SO_VERSION := $(shell awk '$$2 == "SLEM_VERSION" { gsub(/"/, "", $$3); print $$3 }' lib/api/slem.h)
SO_MAJOR  = $(firstword $(subst ., ,$(SO_VERSION)))
SONAME    = libslem.so.$(SO_MAJOR)
SO_REAL   = libslem.so.$(SO_VERSION)
SO_LINKS  = lib/$(SO_REAL) lib/$(SONAME) lib/libslem.so
SO_MAP    = lib/api/libslem.map
PIC_OBJ   = $(LIB_SRC:lib/%.c=build/pic/%.o)
# every symbol resolved at link time (not under the sanitizers, whose runtime the program
# brings)
SO_LDFLAGS = -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(SO_MAP) $(if $(SAN),,-Wl,--no-undefined)

TOOLS     = slem-negstats slem-encode slem-match slem-eval slem-merge slem-report slem-esvm \
            slem-calibrate slem-expand
BINS      = $(TOOLS:%=bin/%)
CLI_OBJ   = build/cmd/cli.o
TEST_SRC  = $(wildcard tests/check_*.c)
TEST_BINS = $(TEST_SRC:tests/%.c=build/tests/%)
MANS      = $(TOOLS:%=man/%.1)
# scripts installed beside the tools, under these names, with their man pages
SCRIPTS   = tools/slem-tune:slem-tune tools/plot-pr:slem-plot-pr \
  tools/slem-scale:slem-parallel tools/slem-scale:slem-sbatch \
  tools/slem-reindex:slem-reindex
# slem-trec_eval: slem-eval under trec_eval's name (a link), with its own page
LINK_MANS = man/slem-trec_eval.1
SCRIPT_MANS = man/slem-tune.1 man/slem-plot-pr.1 man/slem-parallel.1 man/slem-sbatch.1 \
  man/slem-reindex.1
# slem-scale's engines, one driver each (tools/engines/NAME.sh), sourced by the installed
# slem-parallel and slem-sbatch from bin/../libexec/slem/engines/
ENGINES   = $(wildcard tools/engines/*.sh)
ENGINEDIR = $(PREFIX)/libexec/slem/engines
# the library's install: the header, the shared library and its links, the static archive,
# slem.pc, slem(3), and the Python package (python/slem/*.py, when the tree has it) where
# Debian's python3 finds it
LIBDIR    = $(PREFIX)/lib
PCDIR     = $(LIBDIR)/pkgconfig
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python3.$(shell /usr/bin/python3 -c 'import sys; print(sys.version_info[1])' 2>/dev/null || echo 11)/dist-packages)
PY_SRC    = $(wildcard python/slem/*.py)
LIB_MANS  = man/slem.3

.PHONY: all bench-probe check check-cores demo install uninstall clean deps unit-test cli-test man-test python-test fuzz fuzz-replay
.SUFFIXES:

all: $(BINS) $(SO_LINKS)

build/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

build/cmd/%.o: cmd/%.c $(LIB_HDR) $(wildcard cmd/*.h) | build/cmd
	$(CC) $(ALL_CFLAGS) -c $< -o $@

lib/libslem.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# ---- libslem.so: the rules (the variables are above) ----
build/pic/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(SO_MAP): lib/api/slem.h scripts/api-map.sh
	sh scripts/api-map.sh lib/api/slem.h >$@.tmp && mv $@.tmp $@

lib/$(SO_REAL): $(PIC_OBJ) $(SO_MAP)
	$(CC) $(ALL_LDFLAGS) $(SO_LDFLAGS) -o $@ $(PIC_OBJ) $(LIBS)

lib/$(SONAME): lib/$(SO_REAL)
	ln -sf $(SO_REAL) $@

lib/libslem.so: lib/$(SONAME)
	ln -sf $(SONAME) $@

bin/%: build/cmd/%.o $(CLI_OBJ) lib/libslem.a | bin
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(CLI_OBJ) lib/libslem.a $(LIBS)

bin/slem-esvm: build/cmd/slem-esvm.o $(CLI_OBJ) $(RAND_OBJ) lib/libslem.a | bin
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(RAND_OBJ) $(CLI_OBJ) lib/libslem.a $(LIBS)

build/tests/%: tests/%.c tests/testutil.h lib/libslem.a | build/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< lib/libslem.a $(LIBS) $(HDF5_LIBS) $(CHECK_LIBS)

build/tests/check_esvm: tests/check_esvm.c tests/testutil.h $(RAND_OBJ) lib/libslem.a | build/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(RAND_OBJ) lib/libslem.a $(LIBS) $(HDF5_LIBS) $(CHECK_LIBS)

bench-probe: bin/slem-bench-probe
bin/slem-bench-probe: scripts/bench.d/probe.c | bin
	$(CC) -O2 -o $@ $< -Wl,--no-as-needed $(BLAS_LIBS)

build/cmd build/tests bin:
	mkdir -p $@

# Installs the Debian packages that are missing (quiet when none is).
deps:
	@sh scripts/install-deps.sh

# Check's default of 4 s a test case is too short for a loaded or sanitized run (CI's
# AddressSanitizer pass timed out there): 60 s unless the caller sets CK_DEFAULT_TIMEOUT
unit-test: $(TEST_BINS)
	@f=0; for t in $(TEST_BINS); do echo "== $$t"; CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} $$t || f=$$((f + 1)); done; test $$f = 0

# every CLI script runs, and the target fails when any of them did
CLI_TESTS = tests/layers.sh tests/prefixes.sh tests/so-symbols.sh tests/header.sh tests/install.sh tests/numcmp.sh tests/cli.sh tests/cli-blas.sh tests/cli-install.sh tests/readme-examples.sh tests/cli-footguns.sh \
  tests/cli-eval.sh tests/cli-api-search.sh tests/cli-trec.sh tests/cli-merge.sh tests/cli-rankings.sh tests/cli-kernel.sh tests/cli-krec.sh \
  tests/cli-formats.sh tests/cli-hdf5.sh tests/cli-faiss.sh tests/cli-exact.sh tests/cli-shard.sh tests/cli-container.sh tests/cli-verify.sh tests/cli-scripts.sh tests/cli-tty.sh tests/cli-report.sh tests/cli-esvm.sh tests/cli-hostile.sh \
  tests/cli-calibrate.sh tests/cli-expand.sh tests/cli-family.sh tests/cli-variants.sh tests/cli-demo.sh tests/cli-cores.sh tests/faults.sh tests/crash.sh \
  tests/cli-numeric.sh tests/cli-arith.sh tests/cli-large.sh tests/cli-nul.sh tests/cli-position.sh tests/reindex.sh tests/parallel.sh tests/slurm.sh

cli-test: $(BINS) $(SO_LINKS) build/tests/faultshim.so build/tests/nonblock build/tests/api_search_driver
	@f=0; for t in $(CLI_TESTS); do sh $$t || f=$$((f + 1)); done; test $$f = 0

# the Python package (python/slem) from the checkout, against the tools' bytes; Debian's
# python3 on purpose, whose numpy, pytest and faiss install-deps installs; the checkout's
# lib/libslem.so, whatever SLEM_LIBRARY the caller has set
# Under SANITIZE=1 libslem.so is instrumented and Python is not: the sanitizers' runtime of
# $(CC) is preloaded (clang's shared one, or gcc's libasan), leaks not reported (Python's
# own allocations live to the end)
PY_SAN = $(if $(SAN),LD_PRELOAD=$(shell $(CC) -print-file-name=$(if $(findstring clang,$(CC)),libclang_rt.asan-x86_64.so,libasan.so)) ASAN_OPTIONS=detect_leaks=0$(if $(ASAN_OPTIONS),:$(ASAN_OPTIONS)))
python-test: $(BINS) lib/libslem.so
	env -u SLEM_LIBRARY $(PY_SAN) PYTHONPATH=python /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests

# ---- the golden suites once per OpenBLAS kernel (make check-cores) ----
# OpenBLAS chooses its kernels by CPU and they round differently, so a golden must hold
# what the algorithm guarantees, not one kernel's last bits (issue 26). check-cores runs the
# man pages' examples, the CLI scripts that compare with references (CORE_TESTS) and the
# unit tests of the code that goes through BLAS (CORE_UNIT) under OPENBLAS_CORETYPE set to
# each of CORETYPES, skipping with a message a core this CPU cannot run; .ci/run runs it
# after make check. Not here: the engines, faults and crash tests, and the tests of code
# that never calls BLAS (I/O and formats, rankings, evaluation, reports, usage errors).
CORETYPES ?= Haswell SkylakeX Cooperlake Zen Prescott Sandybridge
CORE_TESTS = tests/cli.sh tests/cli-numeric.sh tests/cli-exact.sh tests/cli-shard.sh \
  tests/cli-merge.sh tests/cli-kernel.sh tests/cli-krec.sh tests/cli-formats.sh tests/cli-esvm.sh \
  tests/cli-calibrate.sh tests/cli-expand.sh tests/cli-family.sh tests/cli-variants.sh tests/cli-eval.sh \
  tests/cli-demo.sh tests/cli-verify.sh tests/cli-position.sh tests/cli-api-search.sh
CORE_UNIT = $(addprefix build/tests/,check_numeric check_match check_kernel check_family \
  check_esvm check_calibrate check_expand check_merge check_api_search)

check-cores: $(BINS) $(CORE_UNIT) build/tests/api_search_driver
	@CORETYPES="$(CORETYPES)" MANS="$(MANS) $(SCRIPT_MANS)" CORE_TESTS="$(CORE_TESTS)" \
	  CORE_UNIT="$(CORE_UNIT)" CORE_JOBS="$(JOBS)" sh tests/cores.sh

# slem-report's page in headless Chromium (skipped when Chromium is not installed)
browser-test: $(BINS) build/tests/pngstat
	@sh tests/browser.sh

# slem-sbatch's page is slem-parallel's under its own title (checked by man-test)
man/slem-sbatch.1: man/slem-parallel.1 scripts/man-alias.sh
	sh scripts/man-alias.sh man/slem-parallel.1 SLEM-SBATCH >$@.tmp && mv $@.tmp $@

# man/slem.3 (the C API) builds its examples against an install: tests/install.sh runs it
man-test: $(BINS)
	@sh tests/man-examples.sh $(MANS) $(SCRIPT_MANS) $(LINK_MANS)

# the build on every core (JOBS), the tests one after the other
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all $(TEST_BINS) $(REPLAY_BINS)
	@$(MAKE) --no-print-directory -j1 unit-test cli-test fuzz-replay man-test python-test browser-test

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	@for s in $(SCRIPTS); do echo "install -m 755 $${s%%:*} $(DESTDIR)$(PREFIX)/bin/$${s#*:}"; \
	  install -m 755 "$${s%%:*}" "$(DESTDIR)$(PREFIX)/bin/$${s#*:}" || exit 1; done
	install -m 644 $(MANS) $(SCRIPT_MANS) $(LINK_MANS) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(ENGINEDIR)
	install -m 644 $(ENGINES) $(DESTDIR)$(ENGINEDIR)/
	ln -sf slem-eval $(DESTDIR)$(PREFIX)/bin/slem-trec_eval
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PCDIR) $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 lib/api/slem.h $(DESTDIR)$(PREFIX)/include/slem.h
	install -m 755 lib/$(SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libslem.so
	install -m 644 lib/libslem.a $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SO_VERSION)|' -e 's|@LIBS@|$(LIBS)|' \
	  lib/api/slem.pc.in >$(DESTDIR)$(PCDIR)/slem.pc
	install -m 644 $(LIB_MANS) $(DESTDIR)$(PREFIX)/share/man/man3/
	$(if $(PY_SRC),install -d $(DESTDIR)$(PYTHONDIR)/slem)
	$(if $(PY_SRC),install -m 644 $(PY_SRC) $(DESTDIR)$(PYTHONDIR)/slem/)
	$(if $(DESTDIR),,ldconfig 2>/dev/null || :)

# Removes what `make install` put there (same PREFIX and DESTDIR), and nothing else. Without
# DESTDIR both refresh the dynamic linker's cache (ldconfig, when it may), so that a program
# linked with -lslem finds libslem.so.0 under /usr/local/lib at once.
uninstall:
	rm -f $(TOOLS:%=$(DESTDIR)$(PREFIX)/bin/%) $(DESTDIR)$(PREFIX)/bin/slem-trec_eval $(foreach s,$(SCRIPTS),$(DESTDIR)$(PREFIX)/bin/$(word 2,$(subst :, ,$(s))))
	rm -f $(MANS:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) $(SCRIPT_MANS:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) $(LINK_MANS:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%)
	rm -f $(ENGINES:tools/engines/%=$(DESTDIR)$(ENGINEDIR)/%)
	rmdir $(DESTDIR)$(ENGINEDIR) $(DESTDIR)$(PREFIX)/libexec/slem 2>/dev/null || :
	rm -f $(DESTDIR)$(PREFIX)/include/slem.h $(DESTDIR)$(PCDIR)/slem.pc $(LIB_MANS:man/%=$(DESTDIR)$(PREFIX)/share/man/man3/%)
	rm -f $(DESTDIR)$(LIBDIR)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libslem.so $(DESTDIR)$(LIBDIR)/libslem.a
	rm -f $(PY_SRC:python/slem/%=$(DESTDIR)$(PYTHONDIR)/slem/%) $(PY_SRC:python/slem/%.py=$(DESTDIR)$(PYTHONDIR)/slem/__pycache__/%.*.pyc)
	$(if $(PY_SRC),rmdir $(DESTDIR)$(PYTHONDIR)/slem/__pycache__ $(DESTDIR)$(PYTHONDIR)/slem 2>/dev/null || :)
	$(if $(DESTDIR),,ldconfig 2>/dev/null || :)

clean:
	rm -rf build bin lib/libslem.a $(SO_LINKS)

# Reads a screenshot for tests/browser.sh: size, colours, pixels near given colours.
build/tests/pngstat: tests/pngstat.c | build/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lpng

# Runs a command on a non-blocking standard descriptor, for tests/cli-hostile.sh.
build/tests/nonblock: tests/nonblock.c | build/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# The fault-injection shim of tests/faults.sh (LD_PRELOAD).
build/tests/faultshim.so: tests/faultshim.c | build/tests
	$(CC) -std=c11 -O2 -Wall -Wextra -shared -fPIC -o $@ $< -ldl

# ---- fuzzing ----
# make fuzz FUZZ_SECONDS=N builds each libFuzzer harness of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined) and runs it N seconds from its seed corpus in
# testdata/fuzz; a crash stops make and leaves the input in build/fuzz. The corpora are
# replayed by `make check` with the ordinary compiler (fuzz-replay).
FUZZERS      = vecs cache rank truth kernel calib
FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_BINS    = $(FUZZERS:%=build/fuzz/fuzz_%)
REPLAY_BINS  = $(FUZZERS:%=build/tests/replay_%)

FUZZ_FLAGS   = -std=c11 -g -O1 -fno-sanitize-recover=undefined $(HDF5_CFLAGS)
FUZZ_OBJ     = $(LIB_SRC:lib/%.c=build/fuzz/obj/%.o)

build/fuzz build/fuzz/obj:
	mkdir -p $@

# the library once for every harness (instrumented for coverage, not linked with libFuzzer);
# kept between runs, though nothing but the harnesses names them
.SECONDARY: $(FUZZ_OBJ)
build/fuzz/obj/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(ALL_CPPFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJ) | build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(ALL_CPPFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_OBJ) $(LIBS)

build/tests/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/standalone.c tests/fuzz/fuzz.h lib/libslem.a | build/tests
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/fuzz/standalone.c $< lib/libslem.a $(LIBS)

# each harness is one process on one core: JOBS of them run at a time, then each one's
# result is told in the order of FUZZERS
fuzz:
	@$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_BINS)
	@n=0; for z in $(FUZZERS); do \
	  mkdir -p build/fuzz/corpus-$$z; rm -f build/fuzz/$$z.status; \
	  { build/fuzz/fuzz_$$z -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -rss_limit_mb=2048 \
	      -artifact_prefix=build/fuzz/$$z- build/fuzz/corpus-$$z testdata/fuzz/$$z >build/fuzz/$$z.log 2>&1; \
	    echo $$? >build/fuzz/$$z.status; } & \
	  n=$$((n + 1)); if [ $$n -ge $(JOBS) ]; then wait; n=0; fi; \
	done; wait; \
	p=0; f=0; for z in $(FUZZERS); do \
	  st=$$(cat build/fuzz/$$z.status 2>/dev/null || echo none); \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$z.log); \
	  if [ "$$st" = 0 ]; then p=$$((p + 1)); echo "fuzz_$$z: $$runs executions in $(FUZZ_SECONDS) s, no crash"; \
	  else f=$$((f + 1)); echo "FAIL: fuzz_$$z (status $$st):"; grep -E "ERROR|SUMMARY|Test unit written" build/fuzz/$$z.log; fi; \
	done; echo "fuzz: $$p passed, $$f failed"; test $$f = 0

fuzz-replay: $(REPLAY_BINS)
	@p=0; f=0; for z in $(FUZZERS); do \
	  if build/tests/replay_$$z testdata/fuzz/$$z/* >/dev/null; then p=$$((p + 1)); \
	  else f=$$((f + 1)); echo "FAIL: replay of testdata/fuzz/$$z"; fi; \
	done; echo "fuzz-replay: $$p passed, $$f failed"; test $$f = 0
