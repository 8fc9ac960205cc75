#!/usr/bin/env bash
# Builds a libFuzzer target (with AddressSanitizer) and runs it.
# Usage: Fuzz/run.sh [SECONDS]            the policy loader (default 60 seconds)
#        Fuzz/run.sh trash [SECONDS]      the trash date readers: .trashinfo, DeletionDate, trash stamp
#        Fuzz/run.sh journal [SECONDS]    the journal readers and recovery (inputs are record bodies, framed
#                                         with valid checksums by the target)
# New crashes land in Fuzz/crashes/; keep each one as a regression case, which `swift test` runs: policy inputs
# in Fuzz/Regressions/ (FuzzRegressionTests), trash inputs in Fuzz/TrashRegressions/ (TrashFuzzRegressionTests),
# journal inputs in Fuzz/JournalRegressions/ (JournalFuzzRegressionTests).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
target=policy
case "${1:-}" in
  trash|journal) target=$1; shift ;;
esac
seconds=${1:-60}
out=${FUZZ_OUT:-.build/fuzz}   # FUZZ_OUT: build somewhere else (a shared scratch dir)
case $target in
  trash)   entry=Fuzz/TrashDatesFuzz.swift; module=TrashFuzz; corpus=Fuzz/work-corpus-trash; max_len=4096 ;;
  journal) entry=Fuzz/JournalFuzz.swift; module=JournalFuzz; corpus=Fuzz/work-journal-corpus; max_len=8192 ;;
  *)       entry=Fuzz/PolicyLoaderFuzz.swift; module=PolicyFuzz; corpus=Fuzz/work-corpus; max_len=65536 ;;
esac
mkdir -p "$out" Fuzz/crashes "$corpus"
clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CPosix/include Sources/CPosix/CPosix.c -o "$out/CPosix.o"
# The bundled policies, as the EmbedPolicies build plugin writes them for `swift build`.
swiftc -O Plugins/EmbedPoliciesTool/main.swift -o "$out/embed-policies"
"$out/embed-policies" "$out/BundledPolicyTexts.swift" Policies/*.yaml
# The library's layers are targets for `swift build`; the fuzzer compiles them as one module, so the imports
# of one layer by another go (each file is copied without them).
rm -rf "$out/src" && mkdir -p "$out/src"
find Sources -path 'Sources/StoragePolicy*' -name '*.swift' | while read -r f; do
  sed -E '/^(@_exported |@_spi\(Layers\) )?import StoragePolicy/d' "$f" > "$out/src/$(echo "$f" | tr / _)"
done
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name "$module" -package-name policyctl -swift-version 6 \
  -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
  -Xcc -fmodule-map-file=Fuzz/CPosix.modulemap \
  "$out"/src/*.swift "$out/BundledPolicyTexts.swift" "$entry" \
  "$out/CPosix.o" -lyaml -o "$out/$target-fuzz"
case $target in
  trash)
    cp Fuzz/TrashCorpus/* Fuzz/TrashRegressions/* "$corpus"/ 2>/dev/null || true ;;
  journal)
    # Each run makes and removes a scratch root under JOURNAL_FUZZ_SCRATCH (/tmp).
    cp Fuzz/JournalCorpus/* Fuzz/JournalRegressions/* "$corpus"/ 2>/dev/null || true ;;
  *)
    # Seeds: the reference policies, the benchmark policy, the corpus and the regressions kept in the repo.
    cp Policies/*.yaml Fuzz/Corpus/* Fuzz/Regressions/* Benchmarks/*.yaml "$corpus"/ 2>/dev/null || true ;;
esac
exec "$out/$target-fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len="$max_len" \
  -artifact_prefix="Fuzz/crashes/$target-" "$corpus"
