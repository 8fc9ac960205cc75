#!/usr/bin/env bash
# Runs a command with Sources/PolicyctlCommands/Revision.swift stamped with the current git revision, then puts
# the file back exactly as it was, so the work tree never carries a stamped revision.
set -euo pipefail
cd "$(dirname "$0")/.."
file=Sources/PolicyctlCommands/Revision.swift
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- Sources 2>/dev/null) ]]; then rev="$rev-dirty"; fi
backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT
sed -i "s/static let built = \".*\"/static let built = \"$rev\"/" "$file"
"$@"
