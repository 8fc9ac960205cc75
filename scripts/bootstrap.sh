#!/usr/bin/env bash
# Installs what building policyctl needs besides Swift 6: libyaml (headers) and pkg-config, which SwiftPM uses
# to find it. Does nothing when both are there. Debian/Ubuntu through apt-get (with sudo when not root), macOS
# through Homebrew; elsewhere it says what to install and fails. Called by `make demo` and `make test`.
set -euo pipefail

if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists yaml-0.1 2>/dev/null; then
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "bootstrap: libyaml-dev and pkg-config are missing; install them as root: apt-get install libyaml-dev pkg-config" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "bootstrap: installing libyaml-dev and pkg-config (apt-get)" >&2
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libyaml-dev pkg-config
elif command -v brew >/dev/null 2>&1; then
  echo "bootstrap: installing libyaml and pkg-config (brew)" >&2
  brew install libyaml pkg-config
else
  echo "bootstrap: libyaml and pkg-config are missing and neither apt-get nor brew is here; install libyaml (headers) and pkg-config with your package manager" >&2
  exit 1
fi

pkg-config --exists yaml-0.1 || { echo "bootstrap: pkg-config still cannot find yaml-0.1 after installing; check PKG_CONFIG_PATH" >&2; exit 1; }
