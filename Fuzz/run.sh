#!/usr/bin/env bash
# Builds a libFuzzer target (with AddressSanitizer) and runs it.
# Usage: Fuzz/run.sh [SECONDS]          the policy loader (default 60 seconds)
#        Fuzz/run.sh trash [SECONDS]    the trash date readers: .trashinfo, DeletionDate, trash stamp
# New crashes land in Fuzz/crashes/; keep each one as a regression case: policy inputs in Fuzz/Regressions/
# (run by Tests/StoragePolicyTests/Policy/FuzzRegressionTests.swift), trash inputs in Fuzz/TrashRegressions/
# (run by Tests/StoragePolicyTests/Evaluation/TrashFuzzRegressionTests.swift).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
target=policy
if [[ "${1:-}" == "trash" ]]; then target=trash; shift; fi
seconds=${1:-60}
out=${FUZZ_OUT:-.build/fuzz}   # FUZZ_OUT: build somewhere else (a shared scratch dir)
if [[ $target == trash ]]; then
  entry=Fuzz/TrashDatesFuzz.swift; binary=trash-fuzz; corpus=Fuzz/work-corpus-trash; max_len=4096
else
  entry=Fuzz/PolicyLoaderFuzz.swift; binary=policy-fuzz; corpus=Fuzz/work-corpus; max_len=65536
fi
mkdir -p "$out" Fuzz/crashes "$corpus"
clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CPosix/include Sources/CPosix/CPosix.c -o "$out/CPosix.o"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name PolicyFuzz -swift-version 6 \
  -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
  -Xcc -fmodule-map-file=Fuzz/CPosix.modulemap \
  $(find Sources/StoragePolicy -name '*.swift') "$entry" \
  "$out/CPosix.o" -lyaml -o "$out/$binary"
if [[ $target == trash ]]; then
  # Seeds: Fuzz/TrashCorpus and the regressions kept in the repo.
  cp Fuzz/TrashCorpus/* Fuzz/TrashRegressions/* "$corpus"/ 2>/dev/null || true
else
  # Seeds: the reference policies, the benchmark policy, the corpus and the regressions kept in the repo
  # (Tests/StoragePolicyTests/Policy/FuzzRegressionTests.swift runs every one of them).
  cp Policies/*.yaml Fuzz/work-corpus/ 2>/dev/null || true
  cp Fuzz/Corpus/* Fuzz/Regressions/* Benchmarks/*.yaml Fuzz/work-corpus/ 2>/dev/null || true
fi
"$out/$binary" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len="$max_len" \
  -artifact_prefix=Fuzz/crashes/ "$corpus"
