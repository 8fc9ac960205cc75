#!/usr/bin/env bash
# Builds a libFuzzer target (with AddressSanitizer) and runs it: the policy loader, or with `journal` the
# journal readers and recovery (inputs are record bodies, framed with valid checksums by the target).
# Usage: Fuzz/run.sh [journal] [SECONDS]   (default 60). New crashes land in Fuzz/crashes/; keep each one as a
# regression case (Fuzz/Regressions/ or Fuzz/JournalRegressions/), which `swift test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
target=policy
if [ "${1:-}" = journal ]; then target=journal; shift; fi
seconds=${1:-60}
out=${FUZZ_OUT:-.build/fuzz}   # FUZZ_OUT: build somewhere else (a shared scratch dir)
mkdir -p "$out" Fuzz/crashes Fuzz/work-corpus Fuzz/work-journal-corpus
clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CPosix/include Sources/CPosix/CPosix.c -o "$out/CPosix.o"
if [ "$target" = journal ]; then
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name JournalFuzz -swift-version 6 \
    -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
    -Xcc -fmodule-map-file=Fuzz/CPosix.modulemap \
    $(find Sources/StoragePolicy -name '*.swift') Fuzz/JournalFuzz.swift \
    "$out/CPosix.o" -lyaml -o "$out/journal-fuzz"
  # Seeds: Fuzz/JournalCorpus and the regressions (Tests/StoragePolicyTests/Apply/JournalFuzzRegressionTests.swift
  # runs every one of them). Each run makes and removes a scratch root under JOURNAL_FUZZ_SCRATCH (/tmp).
  cp Fuzz/JournalCorpus/* Fuzz/JournalRegressions/* Fuzz/work-journal-corpus/ 2>/dev/null || true
  exec "$out/journal-fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=8192 \
    -artifact_prefix=Fuzz/crashes/journal- Fuzz/work-journal-corpus
fi
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name PolicyFuzz -swift-version 6 \
  -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
  -Xcc -fmodule-map-file=Fuzz/CPosix.modulemap \
  $(find Sources/StoragePolicy -name '*.swift') Fuzz/PolicyLoaderFuzz.swift \
  "$out/CPosix.o" -lyaml -o "$out/policy-fuzz"
# Seeds: the reference policies, the benchmark policy, the corpus and the regressions kept in the repo
# (Tests/StoragePolicyTests/Policy/FuzzRegressionTests.swift runs every one of them).
cp Policies/*.yaml Fuzz/work-corpus/ 2>/dev/null || true
cp Fuzz/Corpus/* Fuzz/Regressions/* Benchmarks/*.yaml Fuzz/work-corpus/ 2>/dev/null || true
"$out/policy-fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix=Fuzz/crashes/ Fuzz/work-corpus
