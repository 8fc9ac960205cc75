#!/usr/bin/env bash
# Builds the libFuzzer target over the policy loader (with AddressSanitizer) and runs it.
# Usage: Fuzz/run.sh [SECONDS]   (default 60). New crashes land in Fuzz/crashes/; keep each one as a
# regression case in Tests/StoragePolicyTests/Policy/FuzzRegressionTests.swift.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-60}
out=${FUZZ_OUT:-.build/fuzz}   # FUZZ_OUT: build somewhere else (a shared scratch dir)
mkdir -p "$out" Fuzz/crashes Fuzz/work-corpus
clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CPosix/include Sources/CPosix/CPosix.c -o "$out/CPosix.o"
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
