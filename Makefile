# Builds, installs and uninstalls policyctl. `make install PREFIX=/usr/local` (DESTDIR honoured).
# The binary links the Swift runtime statically; it needs only libyaml (libyaml-0-2) at run time.
PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SWIFTFLAGS ?=
BIN = $(shell $(SWIFT) build $(SWIFTFLAGS) -c release --show-bin-path)/policyctl
BINDIR := $(DESTDIR)$(PREFIX)/bin
MANDIR := $(DESTDIR)$(PREFIX)/share/man
SHAREDIR := $(DESTDIR)$(PREFIX)/share/policyctl
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: all build test install uninstall clean

all: build

build:
	scripts/stamp-revision.sh $(SWIFT) build $(SWIFTFLAGS) -c release --static-swift-stdlib --product policyctl

test:
	$(SWIFT) test

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

uninstall:
	rm -f $(BINDIR)/policyctl $(MANDIR)/man1/policyctl.1 $(MANDIR)/man5/policyctl-policy.5 \
	      $(BASHDIR)/policyctl $(ZSHDIR)/_policyctl $(FISHDIR)/policyctl.fish
	rm -rf $(SHAREDIR)

clean:
	rm -rf .build/release
