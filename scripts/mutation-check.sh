#!/usr/bin/env bash
# Makes one realistic bug at a time in a scratch copy of the tree, runs the tests, and says whether they caught
# it. Each mutation removes one safety line; a mutation the suite survives is a missing test. Never edits the
# working tree: everything happens in the scratch copy (default /tmp/policyctl-mutation, kept between runs so
# rebuilds are incremental).
#
#   scripts/mutation-check.sh            # every mutation, the whole suite each time (slow: ~13 suite runs)
#   scripts/mutation-check.sh --fast     # only the suites that guard each mutation (minutes, not an hour)
#   scripts/mutation-check.sh NAME...    # only these mutations
# Exit status: 0 when every mutation was caught, 1 when one survived, 2 when one no longer applies.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
SCRATCH="${MUTATION_SCRATCH:-/tmp/policyctl-mutation}"
FAST=0
ONLY=()
for arg in "$@"; do
  case "$arg" in
    --fast) FAST=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) ONLY+=("$arg") ;;
  esac
done

# name @@ file @@ test filters for --fast (each a field) @@ python replacements: a list of (old, new), each old found exactly once
MUTATIONS=$(cat <<'LIST'
boundary-24h @@ Sources/StoragePolicyModel/Policy/Ages.swift @@ Expire @@ [("return !overflow && age > limit.nanoseconds", "return !overflow && age >= limit.nanoseconds")]
trash-by-mtime @@ Sources/StoragePolicyEvaluation/Kinds/TrashKind.swift @@ Trash @@ [("trashedAt = status.changeTimeNs", "trashedAt = status.modificationTimeNs")]
quota-order @@ Sources/StoragePolicyEvaluation/Kinds/QuotaKind.swift @@ Quota @@ [("candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(path(a.member)", "candidates.sort { a, b in a.time != b.time ? a.time > b.time : ByteOrder.precedes(path(a.member)"), ("count.candidates.sort { a, b in a.time != b.time ? a.time < b.time", "count.candidates.sort { a, b in a.time != b.time ? a.time > b.time")]
stat-follows-symlinks @@ Sources/CPosix/CPosix.c @@ CheckBeforeChange @@ Expire @@ Walker @@ [("int flags = AT_SYMLINK_NOFOLLOW | (name ? 0 : AT_EMPTY_PATH);", "int flags = (name ? 0 : AT_EMPTY_PATH);")]
no-identity-checks @@ Sources/StoragePolicyApply/StepVerifier.swift @@ Race @@ Applier @@ ApplyCommand @@ [("static func mismatch(_ status: FileStatus, _ identity: EntryIdentity, type: FileType?) -> String? {", "static func mismatch(_ status: FileStatus, _ identity: EntryIdentity, type: FileType?) -> String? {\n        if true { return nil }")]
no-rename-rollback @@ Sources/StoragePolicyApply/Rollback.swift @@ Recovery @@ Crash @@ [("        case .rename(let from, let to):\n            guard let identity = intent.identity,", "        case .rename(let from, let to):\n            if true { return .nothing }\n            guard let identity = intent.identity,")]
no-name-collision-check @@ Sources/StoragePolicyEvaluation/Kinds/NamingKind.swift @@ Naming @@ [("NameRules.freeName(lower) { candidate in exists(candidate) || planned.contains(PathKey(candidate[...])) }", "NameRules.freeName(lower) { candidate in planned.contains(PathKey(candidate[...])) }")]
zero-based-marks @@ Sources/StoragePolicyModel/YAML/Mark.swift @@ YAML @@ PolicyLoader @@ [("Int(mark.line) + 1, column: Int(mark.column) + 1", "Int(mark.line), column: Int(mark.column)")]
sarif-no-ruleId @@ Sources/StoragePolicyReports/Reports/SARIFReport.swift @@ SARIF @@ [("                ruleId: f.rule,", "                ruleId: nil,"), ("        var ruleId: String\n", "        var ruleId: String?\n")]
no-make-durable @@ Sources/StoragePolicyApply/Transaction.swift @@ Durability @@ Crash @@ [("        try journal.flush()\n        durableIntents = intents.count", "        durableIntents = intents.count")]
walker-follows-swapped-symlink @@ Sources/StoragePolicyFileSystem/FileSystem/WalkDirectory.swift @@ CheckBeforeChange @@ Race @@ Walker @@ [("var r = name.withCString { n in systemCall(.open) { system_openat(parent, n, flags) } }", "var r = name.withCString { n in systemCall(.open) { system_openat(parent, n, flags & ~_O_NOFOLLOW) } }")]
no-check-before-delete @@ Sources/StoragePolicyApply/StepVerifier.swift @@ CheckBeforeChange @@ Race @@ ApplyCommand @@ [("    private func verifyDelete(_ action: Action) throws(FileSystemError) -> String? {", "    private func verifyDelete(_ action: Action) throws(FileSystemError) -> String? {\n        if true { return nil }")]
journal-never-fsynced @@ Sources/StoragePolicyApply/Journal.swift @@ Durability @@ Crash @@ PowerLoss @@ [("in try file.write(UnsafeRawBufferPointer(bytes)) }\n            try file.sync()\n        } catch where error.errno == .noSpace {", "in try file.write(UnsafeRawBufferPointer(bytes)) }\n        } catch where error.errno == .noSpace {")]
fix-adopts-others-entry @@ Sources/StoragePolicyEvaluation/LayoutEntries.swift @@ CoTenantPrivileged @@ [("guard owner == 0 || owner == euid || owner == namedOwner else {", "guard true else {")]
apply-skips-owner-recheck @@ Sources/StoragePolicyApply/StepPreparerPermissions.swift @@ CoTenantPrivileged @@ [("        guard action.rule == \"layout\" else { return nil }\n", "        guard action.rule == \"layout\" else { return nil }\n        if true { return nil }\n")]
setuid-on-others-file @@ Sources/StoragePolicyEvaluation/LayoutEntries.swift @@ CoTenantPrivileged @@ [("if type != .directory, let mode, mode & 0o6000 != 0", "if false, type != .directory, let mode, mode & 0o6000 != 0")]
content-violation-chowned @@ Sources/StoragePolicyEvaluation/LayoutEntries.swift @@ CoTenantPrivileged @@ [("                if entry.fix && !drift.isEmpty {", "                if false && entry.fix && !drift.isEmpty {")]
mkdir-identity-unchecked @@ Sources/StoragePolicyApply/StepPreparerPermissions.swift @@ CoTenantPrivileged @@ [("guard made.device == opened.device, made.inode == opened.inode, opened.userID == system_geteuid() else {", "guard true else {")]
mkdir-records-anything @@ Sources/StoragePolicyApply/Transaction.swift @@ CoTenantPrivileged @@ [("              status.type == .directory, status.userID == system_geteuid(),\n", "              status.type == .directory,\n"), ("              FaultInjection.uncounted({ (try? made.entries(limit: 1))?.isEmpty == true }) else {", "              true else {")]
chase-follows-unsafe-link @@ Sources/StoragePolicyFileSystem/FileSystem/PathChase.swift @@ PathChase @@ CoTenantPrivileged @@ [("                            euid: UInt32) -> String? {\n", "                            euid: UInt32) -> String? {\n        if true { return nil }\n")]
chase-unconfined @@ Sources/StoragePolicyFileSystem/FileSystem/PathChase.swift @@ PathChase @@ CoTenantPrivileged @@ [("if !trusted(status.userID, euid), confinedTo == nil { confinedTo = (status.userID, link) }", "if false, confinedTo == nil { confinedTo = (status.userID, link) }")]
trash-any-spelling @@ Sources/StoragePolicyApply/TrashDiscovery.swift @@ CoTenantPrivileged @@ [("        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ (0x30...0x39).contains($0) }),\n              digits.count == 1 || digits.first != 0x30 else { return nil }", "        guard !digits.isEmpty else { return nil }")]
trash-two-per-volume @@ Sources/StoragePolicyApply/TrashDiscovery.swift @@ CoTenantPrivileged @@ [("                if let first = volumes[key] {", "                if false, let first = volumes[key] {")]
state-folders-unbounded @@ Sources/PolicyctlCommands/ApplyRoots.swift @@ CoTenantPrivileged @@ [("guard newStateFolders < RootsRun.newTrashStateFoldersPerRun else {", "guard true else {")]
plan-root-unescaped @@ Sources/StoragePolicyPlan/PlanRenderer.swift @@ ControlBytesInPaths @@ [("on \\(PrintableText.escapingControls(plan.root))\\n\")", "on \\(plan.root)\\n\")")]
restore-into-trash @@ Sources/StoragePolicyApply/Applier.swift @@ RootsRoughEdges @@ [("            if original.hasPrefix(folder) {", "            if false && original.hasPrefix(folder) {")]
options-before-policy-errors @@ Sources/PolicyctlCommands/RootsRun.swift @@ RootsRoughEdges @@ [("            if !error.isIOError { _ = try QuietOutput.load(policyPath, quiet: false) }", "            if false, !error.isIOError { _ = try QuietOutput.load(policyPath, quiet: false) }")]
cat-config-prints-non-policy @@ Sources/PolicyctlCommands/CatConfigCommand.swift @@ RootsRoughEdges @@ [("            if let notPolicy = PolicyLoader.notPolicyError(bytes, file: file.path) {", "            if false, let notPolicy = PolicyLoader.notPolicyError(bytes, file: file.path) {")]
power-loss-no-folder-syncs @@ Sources/StoragePolicyApply/Transaction.swift @@ PowerLoss @@ [("        try syncDirectories()\n        var w = record(.commit)", "        var w = record(.commit)")]
power-loss-no-file-fsync @@ Sources/StoragePolicyApply/Transaction.swift @@ PowerLoss @@ [("            try file.sync()\n            try directory.rename(temp, to: name, noReplace: true)", "            try directory.rename(temp, to: name, noReplace: true)")]
LIST
)

mkdir -p "$SCRATCH"
echo "mutation-check: copying the tree to $SCRATCH/src" >&2
mkdir -p "$SCRATCH/src"
find "$SCRATCH/src" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
tar --exclude=./.build --exclude=./.git -cf - . | tar -C "$SCRATCH/src" -xf -
LOG="$SCRATCH/logs"; mkdir -p "$LOG"
caught=0; survived=0; broken=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  mapfile -t fields < <(printf '%s\n' "${line// @@ /$'\n'}")
  name="${fields[0]}"; file="${fields[1]}"; replacements="${fields[-1]}"
  filters=("${fields[@]:2:${#fields[@]}-3}")
  if [ ${#ONLY[@]} -gt 0 ] && [[ ! " ${ONLY[*]} " == *" $name "* ]]; then continue; fi
  cp "$file" "$SCRATCH/src/$file"
  if ! python3 - "$SCRATCH/src/$file" "$replacements" <<'PY'
import ast, sys
path, pairs = sys.argv[1], ast.literal_eval(sys.argv[2])
text = open(path).read()
for old, new in pairs:
    if text.count(old) != 1:
        sys.exit(f"'{old[:60]}' occurs {text.count(old)} times")
    text = text.replace(old, new)
open(path, "w").write(text)
PY
  then
    echo "BROKEN    $name (the mutation no longer applies to $file: update this list)"
    broken=$((broken + 1)); continue
  fi
  test_args=()
  if [ "$FAST" = 1 ]; then
    filter=$(IFS='|'; echo "${filters[*]}")
    test_args=(--filter "$filter")
  fi
  if ! (cd "$SCRATCH/src" && swift build --build-tests >"$LOG/$name.build" 2>&1); then
    echo "BROKEN    $name (does not build: $LOG/$name.build)"
    broken=$((broken + 1))
  elif (cd "$SCRATCH/src" && swift test --skip-build "${test_args[@]}" >"$LOG/$name.test" 2>&1); then
    echo "SURVIVED  $name (the suite passed with the bug in $file)"
    survived=$((survived + 1))
  else
    failing=$(grep -m1 -o '✘ Test "[^"]*"' "$LOG/$name.test" | sed 's/✘ Test //' || true)
    echo "caught    $name  by ${failing:-a failing test}"
    caught=$((caught + 1))
  fi
  cp "$file" "$SCRATCH/src/$file"
done <<< "$MUTATIONS"
echo "$caught caught, $survived survived, $broken broken"
[ "$broken" = 0 ] || exit 2
[ "$survived" = 0 ] || exit 1
