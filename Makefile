# Builds, installs and uninstalls policyctl. `make install PREFIX=/usr/local` (DESTDIR honoured).
# The binary links the Swift runtime statically; it needs only libyaml (libyaml-0-2) at run time.
# Swift policies (`--policy X.swift`, Docs/scripting.md) link libPolicyctlScripting.so, installed with its
# modules under PREFIX/lib/policyctl; compiling one needs the Swift toolchain that built it.
PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SWIFTFLAGS ?=
BINPATH = $(shell $(SWIFT) build $(SWIFTFLAGS) -c release --show-bin-path)
BIN = $(BINPATH)/policyctl
BINDIR := $(DESTDIR)$(PREFIX)/bin
LIBDIR := $(DESTDIR)$(PREFIX)/lib/policyctl
MANDIR := $(DESTDIR)$(PREFIX)/share/man
SHAREDIR := $(DESTDIR)$(PREFIX)/share/policyctl
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: all bootstrap build demo test test-fast power-loss power-loss-self-test fs-matrix tsan install uninstall clean

all: build

build:
	scripts/stamp-revision.sh sh -c '$(SWIFT) build $(SWIFTFLAGS) -c release --static-swift-stdlib --product policyctl && \
	  $(SWIFT) build $(SWIFTFLAGS) -c release --product PolicyctlScripting'

# libyaml and pkg-config through apt-get or brew when missing (scripts/bootstrap.sh).
bootstrap:
	scripts/bootstrap.sh

# The README's quick start: set up, build, and run the demo on an app container in /tmp.
demo: bootstrap
	$(SWIFT) run $(SWIFTFLAGS) policyctl demo

# The whole suite, what .ci/run calls: set up, build, run every test.
test: bootstrap
	$(SWIFT) test $(SWIFTFLAGS)

# For the edit loop: the library's unit tests only (no end-to-end tests, which run the binary), or the
# suites FILTER names (a regular expression over suite and test names, as `swift test --filter` takes).
FILTER ?= StoragePolicyTests
test-fast: bootstrap
	$(SWIFT) build $(SWIFTFLAGS) --build-tests
	$(SWIFT) test $(SWIFTFLAGS) --skip-build --filter '$(FILTER)'

# Power loss (Docs/safety.md, "Power loss"): the states a power cut can leave of apply, recover, trash, restore and
# undo, each recovered and re-applied by the binary and checked (root, strace, mkfs.ext4). The suite runs a short
# version (PowerLossTests). `POLICYCTL=<binary> make power-loss` checks another build; the last line is
# `power-loss: N crash states, V violations`, exit 1 when V > 0.
POLICYCTL ?= $(CURDIR)/.build/debug/policyctl
power-loss:
	@test -x '$(POLICYCTL)' || $(SWIFT) build $(SWIFTFLAGS) --product policyctl
	python3 scripts/power-loss.py --binary '$(POLICYCTL)'

# The checker's own test: builds mutants of the fsync sites (the three seeded bugs; SITES=all for every site) in
# a scratch copy and expects violations from each.
SITES ?= named
power-loss-self-test:
	python3 scripts/power-loss.py --self-test $(SITES)

# The end-to-end safety suites on ext4, xfs, btrfs, tmpfs, overlayfs and ext4 with casefold (scripts/fs-matrix.sh).
fs-matrix: bootstrap
	$(SWIFT) build $(SWIFTFLAGS) --build-tests
	scripts/fs-matrix.sh

# ThreadSanitizer over the concurrent code (the walker, unlink workers, parallel folder fsyncs, the async engine),
# built apart (.build-tsan) so the ordinary build is not invalidated.
TSAN_FILTER ?= WalkerTests|UnlinkWorkersTests|UnlinkWorkerChoiceTests|ApplierTests|TreeRemovalTests|DirectoryTimesTests|EngineAsyncTests|EngineEventTests|ApplyProgressThreadTests|StorageEngineTests|FlatFolderTests
tsan: bootstrap
	$(SWIFT) test $(SWIFTFLAGS) --sanitize=thread --scratch-path .build-tsan --filter '$(TSAN_FILTER)'

install: build
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(SHAREDIR)/policies $(SHAREDIR)/systemd $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -m 755 $(BIN) $(BINDIR)/policyctl
	$(BIN) manpage --section 1 > $(MANDIR)/man1/policyctl.1
	$(BIN) manpage --section 5 > $(MANDIR)/man5/policyctl-policy.5
	$(BIN) completions bash > $(BASHDIR)/policyctl
	$(BIN) completions zsh > $(ZSHDIR)/_policyctl
	$(BIN) completions fish > $(FISHDIR)/policyctl.fish
	install -m 644 Policies/*.yaml $(SHAREDIR)/policies/
	install -m 644 Docs/policy.schema.json $(SHAREDIR)/
	install -m 644 Docs/systemd/*.service Docs/systemd/*.timer $(SHAREDIR)/systemd/
	install -m 644 Policies/*.swift $(SHAREDIR)/policies/
	# What a compiled Swift policy imports and links (found relative to bin/policyctl), and the module maps
	# of the C modules StoragePolicy imports.
	install -d $(LIBDIR)/Modules $(LIBDIR)/include/CPosix $(LIBDIR)/include/CYAML
	install -m 755 $(BINPATH)/libPolicyctlScripting.so $(LIBDIR)/
	# The front door and the layer modules it re-exports (StoragePolicyFileSystem ... StoragePolicyReports).
	install -m 644 $(BINPATH)/Modules/StoragePolicy*.swiftmodule $(BINPATH)/Modules/PolicyctlCommands.swiftmodule $(LIBDIR)/Modules/
	install -m 644 Sources/CPosix/include/CPosix.h $(LIBDIR)/include/CPosix/
	printf 'module CPosix {\n    umbrella header "CPosix.h"\n    export *\n}\n' > $(LIBDIR)/include/CPosix/module.modulemap
	install -m 644 Sources/CYAML/shim.h $(LIBDIR)/include/CYAML/
	# No `link "yaml"`: the library already links libyaml, so a policy needs no libyaml-dev to link.
	printf 'module CYAML [system] {\n    header "shim.h"\n    export *\n}\n' > $(LIBDIR)/include/CYAML/module.modulemap

uninstall:
	rm -f $(BINDIR)/policyctl $(MANDIR)/man1/policyctl.1 $(MANDIR)/man5/policyctl-policy.5 \
	      $(BASHDIR)/policyctl $(ZSHDIR)/_policyctl $(FISHDIR)/policyctl.fish
	rm -rf $(SHAREDIR) $(LIBDIR)

clean:
	rm -rf .build/release .build-tsan
