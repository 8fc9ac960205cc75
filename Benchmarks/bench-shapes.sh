#!/usr/bin/env bash
# policyctl beside its peers on trees shaped like real places (Benchmarks/generate-shapes.py): an app
# container with every rule kind, a Linux host's shared tmp/ with a FreeDesktop trash, and the flat folder.
# Per shape: plan (the shape's whole policy) beside `find -xdev -printf %s` and fd-find; apply of the tmp/
# expiry beside `systemd-tmpfiles --clean` with the same `e` line, each on its own hard-linked copy of one tree
# (both tools judge by mtime, which the links share); then the ratios. Writes only under $WORK.
#
#   Benchmarks/bench-shapes.sh                   # wall clock, hyperfine, RUNS=5 rounds (a quiet machine only)
#   COUNTS=1 Benchmarks/bench-shapes.sh          # no timing: strace -c -f (all calls, statx, unlinkat, futex,
#                                                # futex per deleted file) and callgrind instructions, one run
#   MEMORY=1 Benchmarks/bench-shapes.sh          # peak RSS (/usr/bin/time -v) of plan and apply of the
#                                                # container's whole policy at BIG entries
#   SHAPES="container" SIZE=50000 ...            # fewer or smaller trees
#   POLICYCTL=/path/to/policyctl ...             # a binary built elsewhere (else a release build here, as make builds it)
#   BASE=/path/to/older/policyctl RUNS=30 ...    # that binary's apply in every round too: an A/B whose rounds share
#                                                # the machine's moment (its ratio printed beside this one's)
# Installs hyperfine, fd-find, strace, valgrind and GNU time with apt-get when missing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
export PATH="/opt/swift/usr/bin:$PATH"

SHAPES=${SHAPES:-"container host flat"}
SIZE=${SIZE:-200000}
FLAT_SIZE=${FLAT_SIZE:-60000}
BIG=${BIG:-1000000}
RUNS=${RUNS:-5}
WORK=${WORK:-/tmp/policyctl-bench-shapes}
COUNTS=${COUNTS:-0}
MEMORY=${MEMORY:-0}
mkdir -p "$WORK"

need() {  # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return
    echo "installing $2..." >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need systemd-tmpfiles systemd
if [ "$COUNTS" = 1 ]; then
    need strace strace
    need valgrind valgrind
elif [ "$MEMORY" = 1 ]; then
    [ -x /usr/bin/time ] || need time time
else
    need hyperfine hyperfine
    need fdfind fd-find
fi

BIN=${POLICYCTL:-}
if [ -z "$BIN" ]; then
    # As `make build` and `make install` build it: the Swift runtime linked in (3.4 ms to start, not 11).
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product policyctl >&2)
    BIN="$REPO/.build/release/policyctl"
fi
# valgrind reads a stripped copy much faster, and it is the same code.
strip -o "$WORK/policyctl" "$BIN" 2>/dev/null || cp "$BIN" "$WORK/policyctl"
BIN="$WORK/policyctl"

tree() {  # tree SHAPE N: generated once, reused afterwards
    local dir="$WORK/tree-$1-$2"
    [ -d "$dir" ] || python3 "$HERE/generate-shapes.py" "$1" "$dir" "$2" >&2
    echo "$dir"
}
policy() {  # the shape's whole policy
    case $1 in
        container) echo "$HERE/container-policy.yaml" ;;
        host) echo "$HERE/host-policy.yaml" ;;
        flat) echo "$WORK/flat-policy.yaml" ;;
    esac
}
age() { case $1 in host) echo 10d ;; *) echo 24h ;; esac; }
# The apply both tools do: the expiry of tmp/ by mtime, nothing else.
expiry_policy() {
    cat > "$WORK/expiry-$1.yaml" <<EOF
version: 1
name: expiry-$1
rules:
  - name: tmp-expiry
    path: tmp
    expire: { after: $(age "$1"), by: mtime }
EOF
    echo "$WORK/expiry-$1.yaml"
}
cat > "$WORK/flat-policy.yaml" <<'EOF'
version: 1
name: flat
rules:
  - name: tmp-expiry
    path: tmp
    expire: { after: 24h }
EOF

# Hard-linked copies: made in a second, and a file's mtime (which both tools judge by) is the template's.
copy() { rm -rf "$2" && cp -al "$1" "$2"; }
prep_a() { echo "rm -rf $WORK/a && cp -al $1 $WORK/a"; }
prep_b() { echo "rm -rf $WORK/b && cp -al $1 $WORK/b"; }
left() { (cd "$1" && find . -path ./.policyctl -prune -o -printf '%P %y\n' | sort); }

check_same() {  # SHAPE TREE: both tools delete the same set
    local shape=$1 t=$2 ep
    ep=$(expiry_policy "$shape")
    echo "e $WORK/b/tmp - - - m:$(age "$shape")" > "$WORK/tmpfiles-$shape.conf"
    copy "$t" "$WORK/a" && "$BIN" apply --policy "$ep" --root "$WORK/a" --yes --max-delete none >/dev/null
    copy "$t" "$WORK/b" && systemd-tmpfiles --clean "$WORK/tmpfiles-$shape.conf"
    if ! diff <(left "$WORK/a") <(left "$WORK/b") >/dev/null; then
        # Ages are spread evenly around the threshold: a few files cross it between the two runs.
        echo "  note: the two trees differ after cleaning by $(diff <(left "$WORK/a") <(left "$WORK/b") | grep -c '^[<>]') entries (files crossing the threshold between the runs)" >&2
    fi
    DELETED=$(( $(find "$t/tmp" | wc -l) - $(find "$WORK/a/tmp" | wc -l) ))
}

futex_line() {  # STRACE_FILE DELETED: futex calls and per deleted file
    python3 - "$1" "$2" <<'EOF'
import sys
calls = {l.split()[-1]: int(l.split()[3]) for l in open(sys.argv[1]) if len(l.split()) >= 5 and l.split()[0][0].isdigit()}
f, d = calls.get("futex", 0), int(sys.argv[2])
print(f"      futex {f:,} for {d:,} deleted files: {f / max(d, 1):.4f} per deleted file")
EOF
}

counts() {  # SHAPE TREE
    local shape=$1 t=$2 p ep
    p=$(policy "$shape"); ep=$(expiry_policy "$shape")
    run() {  # TAG LABEL CMD...
        local tag=$1 label=$2; shift 2
        strace -c -f -o "$WORK/strace-$tag.txt" "$@" >/dev/null
        [ -z "${PREP:-}" ] || bash -c "$PREP"
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind-$tag.out" "$@" >/dev/null 2>"$WORK/callgrind-$tag.log"
        python3 "$HERE/count-summary.py" "$label" 30 "$WORK/strace-$tag.txt" "$WORK/callgrind-$tag.log" statx+newfstatat unlinkat futex
    }
    PREP= run "plan-$shape" "plan (whole policy)" "$BIN" plan --policy "$p" --root "$t" --format json
    PREP= run "find-$shape" "find -xdev -printf %s" find "$t" -xdev -printf '%s\n'
    copy "$t" "$WORK/a"
    PREP="$(prep_a "$t")" run "apply-$shape" "apply (tmp/ expiry)" "$BIN" apply --policy "$ep" --root "$WORK/a" --yes --max-delete none
    futex_line "$WORK/strace-apply-$shape.txt" "$DELETED"
    copy "$t" "$WORK/b"
    PREP="$(prep_b "$t")" run "tmpfiles-$shape" "systemd-tmpfiles --clean" systemd-tmpfiles --clean "$WORK/tmpfiles-$shape.conf"
}

timed() {  # SHAPE TREE: interleaved hyperfine rounds; each round's ratio is the figure that counts
    local shape=$1 t=$2 p ep
    p=$(policy "$shape"); ep=$(expiry_policy "$shape")
    hyperfine --warmup 2 --runs "$RUNS" --style basic --export-json "$WORK/plan-$shape.json" \
        -n "policyctl plan" "$BIN plan --policy $p --root $t --format json > /dev/null" \
        -n "find -printf %s" "find $t -xdev -printf '%s\n' > /dev/null" \
        -n "fdfind" "fdfind -u --one-file-system --changed-before $(age "$shape") . $t > /dev/null" >&2
    rm -f "$WORK"/round-*.json
    for r in $(seq 1 "$RUNS"); do
        local a=(--prepare "$(prep_a "$t")" -n "policyctl apply" "$BIN apply --policy $ep --root $WORK/a --yes --max-delete none")
        local b=(--prepare "$(prep_b "$t")" -n "systemd-tmpfiles --clean" "systemd-tmpfiles --clean $WORK/tmpfiles-$shape.conf")
        local c=()
        [ -z "${BASE:-}" ] || c=(--prepare "$(prep_a "$t")" -n "base apply" "$BASE apply --policy $ep --root $WORK/a --yes --max-delete none")
        if [ $((r % 2)) -eq 1 ]; then set -- "${a[@]}" "${b[@]}" "${c[@]}"; else set -- "${c[@]}" "${b[@]}" "${a[@]}"; fi
        hyperfine --runs 1 --style basic --export-json "$WORK/round-$r.json" "$@" >&2
    done
    python3 - "$WORK" "$shape" "$RUNS" <<'EOF'
import json, statistics, sys
work, shape, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = {x["command"]: x for x in json.load(open(f"{work}/plan-{shape}.json"))["results"]}
p, f, fd = r["policyctl plan"], r["find -printf %s"], r["fdfind"]
print(f"  plan {p['median']*1000:.0f} ms, find -printf {f['median']*1000:.0f} ms, fdfind {fd['median']*1000:.0f} ms: "
      f"plan / find {p['median']/f['median']:.2f}x (target 0.6x on the container), fdfind / find {fd['median']/f['median']:.2f}x")
ratios, base = [], []
for n in range(1, runs + 1):
    res = {x["command"]: x["mean"] for x in json.load(open(f"{work}/round-{n}.json"))["results"]}
    ratios.append(res["policyctl apply"] / res["systemd-tmpfiles --clean"])
    if "base apply" in res: base.append(res["base apply"] / res["systemd-tmpfiles --clean"])
print(f"  apply / systemd-tmpfiles --clean: median of {runs} rounds {statistics.median(ratios):.2f}x "
      f"(rounds {', '.join(f'{q:.2f}' for q in ratios)}; target 1.0x)")
if base:
    print(f"  BASE apply / systemd-tmpfiles --clean, the same rounds: median {statistics.median(base):.2f}x "
          f"(rounds {', '.join(f'{q:.2f}' for q in base)})")
EOF
}

peak() {  # LABEL CMD...: peak RSS under /usr/bin/time -v
    local label=$1; shift
    /usr/bin/time -v "$@" >"$WORK/out.txt" 2>"$WORK/time.txt" || true
    echo "  $label: peak RSS $(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); printf "%.1f MB", $2 * 1024 / 1e6}' "$WORK/time.txt")"
}

echo "== machine: $(nproc) cpus, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$MEMORY" = 1 ]; then
    t=$(tree container "$BIG")
    p=$(policy container)
    echo "== memory, container of $BIG entries: $t"
    # Planned on a hard-linked copy, so the plan's root is the tree its apply changes.
    copy "$t" "$WORK/a"
    peak "plan --format json" "$BIN" plan --policy "$p" --root "$WORK/a" --format json
    cp "$WORK/out.txt" "$WORK/plan-big.json"
    python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print('   actions', s['actions'], 'entries scanned', s['entriesScanned'])" "$WORK/plan-big.json"
    peak "apply PLAN (whole policy, journal on)" "$BIN" apply "$WORK/plan-big.json" --policy "$p" --root "$WORK/a" --yes --max-delete none
    peak "apply --policy (whole policy, journal on)" sh -c "rm -rf $WORK/a && cp -al $t $WORK/a && exec $BIN apply --policy $p --root $WORK/a --yes --max-delete none"
    exit 0
fi
for shape in $SHAPES; do
    n=$SIZE; [ "$shape" = flat ] && n=$FLAT_SIZE
    t=$(tree "$shape" "$n")
    check_same "$shape" "$t"
    echo "== $shape: $t ($(find "$t" -xdev | wc -l) entries; apply deletes $DELETED)"
    if [ "$COUNTS" = 1 ]; then counts "$shape" "$t"; else timed "$shape" "$t"; fi
done
