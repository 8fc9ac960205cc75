#!/usr/bin/env bash
# Installs the tools the deploy/ tests use (ansible-core, ansible-lint, kubernetes-validate), pinned, into a
# venv under the cache folder, where Tests/EndToEndTests/DeployTests.swift finds them. A venv, not the system
# Python: nothing of the machine's own is changed. Where PyPI cannot be reached it says so and exits 0; the
# tests then skip with a message naming this script.
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/policyctl-ci"
venv="$cache/venv"
# Bump together; the stamp file makes a re-run with the same pins a no-op.
pins=(ansible-core==2.19.14 ansible-lint==26.10.1 kubernetes-validate==1.34.1)
stamp="$venv/.policyctl-pins"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${pins[*]}" && -x "$venv/bin/ansible-playbook" ]]; then
  echo "deploy tools: up to date in $venv"
  exit 0
fi
python="$(command -v python3 || true)"
if [[ -z "$python" ]]; then
  echo "deploy tools: skipped: python3 is not installed (the deploy tests will skip)"
  exit 0
fi
if ! "$python" -m venv --help >/dev/null 2>&1; then
  if command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  fi
fi
mkdir -p "$cache"
rm -rf "$venv"
"$python" -m venv "$venv"
# Reachability first, so an offline machine gets one clear line rather than pip's retries.
if ! "$venv/bin/pip" download --quiet --no-deps --dest "$cache/probe" --timeout 15 --retries 1 kubernetes-validate==1.34.1 >/dev/null 2>&1; then
  rm -rf "$venv" "$cache/probe"
  echo "deploy tools: skipped: PyPI not reachable (the deploy tests will skip)"
  exit 0
fi
rm -rf "$cache/probe"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
echo "${pins[*]}" > "$stamp"
echo "deploy tools: installed ${pins[*]} in $venv"
