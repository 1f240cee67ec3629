# SPDX-License-Identifier: MIT
# dnd: one non-recursive Makefile. `make` builds ./dnd, `make test` runs the
# suite, `make bench` the loopback benchmark, `make install` honours PREFIX
# and DESTDIR. SANITIZE=address,undefined builds into a separate tree so the
# two never mix objects.

CC      ?= cc
CFLAGS  ?= -O2 -g
WERROR  ?= 1
SANITIZE ?=

# Where `make install` puts things (GNU names; DESTDIR stages a package).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
DOCDIR  ?= $(DATADIR)/doc/dnd
INSTALL ?= install
# Under PREFIX=/usr the distribution's own places, as pkg-config names them;
# under any other prefix its own tree (bash-completion and systemd both look
# in /usr/local/share/bash-completion/completions, /usr/local/lib/systemd).
ifeq ($(PREFIX),/usr)
BASHCOMPDIR ?= $(or $(shell pkg-config --variable=completionsdir \
	bash-completion 2>/dev/null),$(DATADIR)/bash-completion/completions)
SYSTEMDUNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir \
	systemd 2>/dev/null),$(PREFIX)/lib/systemd/system)
else
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
endif

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes \
	-Wstrict-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif

ifneq ($(SANITIZE),)
BUILD ?= build-san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
# make fuzz: clang's coverage hooks in every object, libFuzzer at link time.
ifeq ($(FUZZ),1)
SANFLAGS += -fsanitize=fuzzer-no-link
endif
else
BUILD ?= build
SANFLAGS :=
endif

DND_CFLAGS := -std=gnu11 -D_GNU_SOURCE -pthread $(WARN) -Isrc $(SANFLAGS)
LIBS := -lxxhash -pthread -lm

# libsodium is required (dnd serve's key proofs and MACs). Without pkg-config
# data, -lsodium still names what is missing at link time; make deps installs it.
DND_CFLAGS += $(shell pkg-config --cflags libsodium 2>/dev/null)
LIBS += $(shell pkg-config --libs libsodium 2>/dev/null || echo -lsodium)
# libmicrohttpd serves the relay's and the server's /metrics.
DND_CFLAGS += $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
LIBS += $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
# OpenSSL 3 does all of TLS (core/tls.c): records, PSK, certificates, kTLS.
DND_CFLAGS += $(shell pkg-config --cflags openssl 2>/dev/null)
LIBS += $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)

# -m sockmap: a BPF program compiled by clang, wrapped into a C skeleton by
# bpftool, loaded by libbpf (the generated header sits in $(BUILD)/bpf).
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
DND_CFLAGS += -I$(BUILD)/bpf $(shell pkg-config --cflags libbpf 2>/dev/null)
LIBS += $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf)
BPF_SRC := src/relay/bpf/relay_sockmap.bpf.c
BPF_OBJ := $(BUILD)/bpf/relay_sockmap.bpf.o
BPF_SKEL := $(BUILD)/bpf/relay_sockmap.skel.h
# Debian's multiarch include directory (asm/types.h), as the BPF compiler
# names it: -dumpmachine says x86_64-pc-linux-gnu under clang (make fuzz).
BPF_ARCH := $(shell $(BPF_CLANG) -print-multiarch 2>/dev/null)

# io_uring support is optional at build time; the probe reports "not built".
ifeq ($(shell pkg-config --exists liburing 2>/dev/null && echo y),y)
DND_CFLAGS += -DDND_HAVE_LIBURING $(shell pkg-config --cflags liburing)
LIBS += $(shell pkg-config --libs liburing)
endif

# The version: the VERSION file, plus the commit when built from git
# (0.2.0+g1a2b3c4). Only version.o depends on it, through build/version.txt.
DND_GIT := $(shell git rev-parse --short HEAD 2>/dev/null)
DND_VERSION := $(shell cat VERSION)$(if $(DND_GIT),+g$(DND_GIT))

SRCS := $(sort $(wildcard src/*.c src/*/*.c))
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/dnd.o,$(OBJS))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:%.c=$(BUILD)/%)
# Helpers the end-to-end scripts run (tests/tools/*.c), found beside $(BIN).
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:%.c=$(BUILD)/%)
BIN := $(BUILD)/dnd

ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: all deps test check asan-check smoke bench clean hdrcheck format format-check \
	fuzz fuzz-bins soak
.PHONY: check-headers check-bpf-tools check-quick install uninstall tools

all: $(BIN)

# ./dnd points at the default build only, so a second build tree
# (BUILD=build-x, SANITIZE=...) never redirects it.
ifeq ($(BUILD),build)
all: dnd
dnd: $(BIN)
	$(Q)ln -sf $(BIN) dnd
endif

$(BIN): $(OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(DND_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/version.txt: FORCE
	@mkdir -p $(BUILD)
	@echo '$(DND_VERSION)' | cmp -s - $@ || echo '$(DND_VERSION)' > $@

$(BUILD)/src/core/version.o: $(BUILD)/version.txt
$(BUILD)/src/core/version.o: DND_CFLAGS += -DDND_VERSION='"$(DND_VERSION)"'

# The effective flags, rewritten only when they change, so that a tree built
# before liburing appeared (or with other CFLAGS, or SANITIZE) is rebuilt
# rather than silently kept: every object depends on $(BUILD)/flags.txt.
DND_FLAGS := CC=$(CC) CFLAGS=$(CFLAGS) DND_CFLAGS=$(DND_CFLAGS) \
	LDFLAGS=$(LDFLAGS) LIBS=$(LIBS) SANITIZE=$(SANITIZE)
DND_FLAGS_Q := '$(subst ','\'',$(DND_FLAGS))'

$(BUILD)/flags.txt: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' $(DND_FLAGS_Q) | cmp -s - $@ || \
		printf '%s\n' $(DND_FLAGS_Q) > $@

$(OBJS) $(UNIT_BINS) $(FUZZ_BINS) $(TOOL_BINS): $(BUILD)/flags.txt

.PHONY: FORCE
FORCE:

# Before the first BPF compile: are clang and bpftool there? A fresh machine
# then hears which Debian packages to install.
check-bpf-tools:
	$(Q)missing=; \
	command -v $(BPF_CLANG) >/dev/null 2>&1 || missing="$$missing clang"; \
	command -v $(BPFTOOL) >/dev/null 2>&1 || missing="$$missing bpftool"; \
	[ -z "$$missing" ] || { echo "dnd: cannot build the -m sockmap BPF program: missing$$missing; apt-get install$$missing libbpf-dev (or run 'make deps' as root)" >&2; exit 1; }

$(BPF_OBJ): $(BPF_SRC) src/relay/bpf/sockmap_abi.h | check-bpf-tools
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BPF     $<")
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -Wall -Werror \
		$(if $(BPF_ARCH),-I/usr/include/$(BPF_ARCH)) -c -o $@ $<

$(BPF_SKEL): $(BPF_OBJ) | check-bpf-tools
	@$(if $(Q),echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name relay_sockmap > $@.tmp && mv $@.tmp $@

$(BUILD)/src/relay/relay_bpf.o: $(BPF_SKEL)

$(BUILD)/%.o: %.c | check-headers
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(DND_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# Before the first compile: are the libraries' headers there? A fresh machine
# then hears which Debian packages to install, not "xxhash.h: No such file".
BUILD_HEADERS := xxhash.h:libxxhash-dev sodium.h:libsodium-dev \
	microhttpd.h:libmicrohttpd-dev openssl/ssl.h:libssl-dev \
	bpf/libbpf.h:libbpf-dev
check-headers:
	$(Q)missing=; for hp in $(BUILD_HEADERS); do \
		printf '#include <%s>\n' "$${hp%%:*}" | $(CC) $(DND_CFLAGS) \
			$(CPPFLAGS) $(CFLAGS) -E -x c - >/dev/null 2>&1 || \
			missing="$$missing $$hp"; \
	done; \
	[ -z "$$missing" ] || { for hp in $$missing; do \
		echo "dnd: cannot build: $${hp%%:*} is missing (Debian package $${hp#*:})" >&2; \
	done; \
	echo "  On Debian or Ubuntu install the build packages:" >&2; \
	echo "    apt-get install libxxhash-dev libsodium-dev libmicrohttpd-dev libssl-dev libbpf-dev clang bpftool pkg-config liburing-dev" >&2; \
	echo "  (liburing-dev is optional: without it dnd has no io_uring" >&2; \
	echo "  methods), or run 'make deps' as root to install everything." >&2; \
	exit 1; }

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(DND_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Itests/unit -MMD -MP \
		$(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS)

# A tool stands alone: it links the libraries it names, none of dnd.
$(BUILD)/tests/tools/%: tests/tools/%.c | check-headers
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(DND_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP $(LDFLAGS) \
		-o $@ $< -lxxhash

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(CC) $(DND_CFLAGS) $(CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
		$(LIB_OBJS) $(LIBS)

deps:
	$(Q)scripts/deps.sh

# The suite: unit programs, then the loopback and netns end-to-end scripts.
test check: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(TOOL_BINS)
	$(Q)DND=$(CURDIR)/$(BIN) UNIT_DIR=$(BUILD)/tests/unit tests/run.sh

# What a package build can run (dh_auto_test): the unit programs and one
# loopback transfer; no packages installed, no root, a few seconds.
check-quick: all $(UNIT_BINS)
	$(Q)DND=$(CURDIR)/$(BIN) UNIT_DIR=$(BUILD)/tests/unit tests/run.sh test_
	$(Q)DND=$(CURDIR)/$(BIN) tests/smoke.sh

asan-check:
	$(Q)$(MAKE) --no-print-directory test SANITIZE=address,undefined

# libFuzzer: every tests/fuzz/fuzz_*.c, built by clang into build-fuzz/
# with ASan and UBSan, runs FUZZ_SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/<harness>/); any crash, leak, UB or hang fails.
# WERROR=0: gcc's -Werror build is the warning gate; clang's own extra
# warnings must not stop the fuzzing.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
fuzz:
	$(Q)scripts/deps.sh fuzz
	$(Q)$(MAKE) --no-print-directory fuzz-bins BUILD=build-fuzz \
		CC=$(FUZZ_CC) SANITIZE=address,undefined FUZZ=1 WERROR=0
	$(Q)tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_SRCS)

fuzz-bins: $(FUZZ_BINS)

# The soak of dnd serve (scripts/soak-serve.sh, as root): one keyed server
# across a veth pair under a mixed load for SOAK_SECONDS (pushes, pulls,
# killed clients, a flood, wrong keys, a full disk), then its checks.
SOAK_SECONDS ?= 60
soak: deps all
	$(Q)DND=$(CURDIR)/$(BIN) scripts/soak-serve.sh $(SOAK_SECONDS)

tools: $(TOOL_BINS)

smoke: deps all
	$(Q)DND=$(CURDIR)/$(BIN) tests/smoke.sh

# dnd's main job: every method pair on loopback against memcpy, a pipe-only
# ceiling and iperf3 (make bench BENCH_ARGS="--full --plot bench.png").
BENCH_ARGS ?= --compare
bench:
	$(Q)scripts/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) bench $(BENCH_ARGS)

hdrcheck: | check-headers
	$(Q)for h in src/*/*.h; do [ -f "$$h" ] || continue; \
		echo "#include \"$${h#src/}\"" | \
		$(CC) $(DND_CFLAGS) -x c -fsyntax-only - || exit 1; done

# Advisory, not run by CI: clang-format 14 cannot keep the tab-aligned
# trailing comments of our structs, so the tree is formatted by hand in the
# same kernel layout; use these on new files.
format:
	clang-format -i src/*.c src/*/*.c src/*/*.h tests/unit/*.c tests/unit/*.h

format-check:
	clang-format --dry-run --Werror src/*.c src/*/*.c src/*/*.h tests/unit/*.c tests/unit/*.h

# `make install`: the program, its man pages, bash completion and docs; the
# systemd unit and the docs/ pages join when they exist. The JSON schemas
# go to DOCDIR/schema, beside json.md, which names them.
MANPAGES := $(sort $(wildcard man/*.1))
DOCS := README.md LICENSE $(sort $(wildcard docs/*.md))
SCHEMAS := $(sort $(wildcard docs/schema/*.json))
UNIT := $(wildcard contrib/dnd-serve.service)

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/dnd
	$(INSTALL) -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0644 completion/dnd $(DESTDIR)$(BASHCOMPDIR)/dnd
	$(INSTALL) -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)/schema
	$(INSTALL) -m 0644 $(SCHEMAS) $(DESTDIR)$(DOCDIR)/schema
ifneq ($(UNIT),)
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 0644 $(UNIT) $(DESTDIR)$(SYSTEMDUNITDIR)
endif

# Removes what install wrote; directories others share (bin, man1) stay.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/dnd $(DESTDIR)$(BASHCOMPDIR)/dnd \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/schema/,$(notdir $(SCHEMAS))) \
		$(DESTDIR)$(SYSTEMDUNITDIR)/dnd-serve.service
	rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DOCDIR)/schema \
		$(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build build-san build-fuzz dnd

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d) $(FUZZ_BINS:=.d) $(TOOL_BINS:=.d)
