#!/usr/bin/env bash
# Times `policyctl plan` (every rule kind) side by side with `find -xdev -printf %s`, fd-find (a stat per
# entry, in parallel) and a name-only `find` on one generated tree, then a flat tree (one 200,000-file folder
# and one 60,000-name folder, half to lowercase), prints the ratios, then measures peak RSS at a million
# entries. Installs hyperfine and fd-find with apt-get when missing. Writes only under $WORK.
#
# Usage: Benchmarks/bench-plan.sh            (SIZE=200000 BIG=1000000 RUNS=10 WORK=/tmp/policyctl-bench)
#        SCRATCH=/tmp/build-x Benchmarks/bench-plan.sh   to build in another scratch folder
#        STRESS=1 ...                         also measure the uncapped 1M tree (a 6x over-quota cache)
#        COUNTS=1 ...                         no timing: system calls (strace -c -f) and instructions of every
#                                             thread (valgrind --tool=callgrind) of one `plan --format json` of
#                                             the SIZE tree and of the flat tree, which machine noise cannot move
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

SIZE=${SIZE:-200000}
BIG=${BIG:-1000000}
RUNS=${RUNS:-10}
WORK=${WORK:-/tmp/policyctl-bench}
SCRATCH=${SCRATCH:-.build}
POLICY=Benchmarks/bench-policy.yaml
mkdir -p "$WORK"

need() {  # need COMMAND PACKAGE: install PACKAGE with apt-get when COMMAND is missing
    command -v "$1" >/dev/null 2>&1 && return
    echo "installing $2..." >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
COUNTS=${COUNTS:-0}
if [ "$COUNTS" = 1 ]; then
    need strace strace
    need valgrind valgrind
else
    need hyperfine hyperfine
    need fdfind fd-find
    [ -x /usr/bin/time ] || need time time
fi

echo "== building policyctl (release)"
swift build -c release --scratch-path "$SCRATCH" --product policyctl 2>&1 | tail -1
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/policyctl"

tree() {  # tree N [flags]: generate once, reuse afterwards
    local dir="$WORK/tree-$1${2:+-uncapped}"
    [ -d "$dir" ] || python3 Benchmarks/generate-tree.py "$dir" "$1" ${2:+--uncapped} >&2
    echo "$dir"
}

echo "== machine"
echo "cpus: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "kernel: $(uname -r), file system: $(df -T "$WORK" | awk 'NR==2 {print $2}'), memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

TREE=$(tree "$SIZE")
# The flat case: one folder of 200,000 files (half expired) and one of 60,000 names (half with uppercase
# letters, some colliding on case). Every rule must stay linear in a folder's size.
FLAT="$WORK/flat"
flat_tree() {  # generate once, reuse afterwards; writes $WORK/flat-policy.yaml
    if [ ! -d "$FLAT" ]; then
        python3 - "$FLAT" <<'EOF'
import os, sys, time
root = sys.argv[1]; now = time.time()
os.makedirs(root + "/tmp"); os.makedirs(root + "/docs")
for i in range(200_000):
    p = f"{root}/tmp/f{i:06d}"
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644))
    age = 48 * 3600 if i % 2 == 0 else 3600
    os.utime(p, (now - age, now - age))
for i in range(60_000):
    name = f"Note-{i:06d}.txt" if i % 2 == 0 else f"note-{i:06d}.txt"
    if i % 1000 == 1: name = f"note-{i - 1:06d}.txt"   # collides with Note-(i-1) on case
    open(f"{root}/docs/{name}", "w").close()
EOF
    fi
    cat > "$WORK/flat-policy.yaml" <<'EOF'
version: 1
name: flat
rules:
  - name: tmp-expiry
    path: tmp
    expire: { after: 24h }
  - name: lower
    path: docs
    naming: { case: lower }
EOF
}

if [ "$COUNTS" = 1 ]; then
    flat_tree
    count() {  # TAG NAME POLICY ROOT: all system calls, statx, openat, then user-space instructions of every thread
        strace -c -f -o "$WORK/strace-$1.txt" "$BIN" plan --policy "$3" --root "$4" --format json >/dev/null
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind-$1.out" \
            "$BIN" plan --policy "$3" --root "$4" --format json >/dev/null 2>"$WORK/callgrind-$1.log"
        python3 Benchmarks/count-summary.py "$2" 24 "$WORK/strace-$1.txt" "$WORK/callgrind-$1.log" statx openat+openat2
    }
    echo "counts, one run each (plan --format json):"
    count "plan-$SIZE" "plan ($SIZE entries)" "$POLICY" "$TREE"
    count "plan-flat" "plan (flat)" "$WORK/flat-policy.yaml" "$FLAT"
    exit 0
fi
echo "== $SIZE-entry tree: $TREE ($(find "$TREE" -xdev | wc -l) entries)"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$WORK/results-$SIZE.json" \
    -n "policyctl plan" "$BIN plan --policy $POLICY --root $TREE --format json > /dev/null" \
    -n "find -printf %s" "find $TREE -xdev -printf '%s\n' > /dev/null" \
    -n "fd (stat per entry)" "fdfind -u --one-file-system --changed-before 24h . $TREE > /dev/null" \
    -n "find (names)" "find $TREE -xdev > /dev/null"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK/results-$SIZE.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
plan, stat, names = r["policyctl plan"], r["find -printf %s"], r["find (names)"]
def line(name, x):
    cpu = x["user"] + x["system"]
    return f"{name:16} mean {x['mean']*1000:7.1f} ms  median {x['median']*1000:7.1f} ms  min {x['min']*1000:7.1f} ms  cpu {cpu*1000:7.1f} ms"
for n, x in (("policyctl plan", plan), ("find -printf %s", stat), ("find (names)", names)):
    print(line(n, x))
print(f"plan / find -printf : {plan['mean']/stat['mean']:.2f}x mean, {plan['median']/stat['median']:.2f}x median, "
      f"{plan['min']/stat['min']:.2f}x best  (target <= 1.0x, goal 0.6x)")
print(f"plan / find (names) : {plan['mean']/names['mean']:.2f}x mean")
fd = r["fd (stat per entry)"]
print(f"fd / find -printf   : {fd['mean']/stat['mean']:.2f}x mean")
print(f"cpu time plan / find -printf: {(plan['user']+plan['system'])/(stat['user']+stat['system']):.2f}x")
EOF

flat_tree
echo "== flat tree: $FLAT ($(find "$FLAT" -xdev | wc -l) entries); load $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$WORK/results-flat.json" \
    -n "policyctl plan (flat)" "$BIN plan --policy $WORK/flat-policy.yaml --root $FLAT --format json > /dev/null" \
    -n "find -printf %s (flat)" "find $FLAT -xdev -printf '%s\n' > /dev/null" \
    -n "fd (flat)" "fdfind -u --one-file-system --changed-before 24h . $FLAT > /dev/null" \
    -n "find (names, flat)" "find $FLAT -xdev > /dev/null"
python3 - "$WORK/results-flat.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
p, f = r["policyctl plan (flat)"], r["find -printf %s (flat)"]
fd, names = r["fd (flat)"], r["find (names, flat)"]
print(f"flat: plan / find -printf : {p['mean']/f['mean']:.2f}x mean, {p['min']/f['min']:.2f}x best  (target <= 1.0x)")
print(f"flat: fd / find -printf   : {fd['mean']/f['mean']:.2f}x mean; find (names) / find -printf: {names['mean']/f['mean']:.2f}x")
print(f"flat: cpu time plan / find -printf: {(p['user']+p['system'])/(f['user']+f['system']):.2f}x")
EOF

peak() {  # peak NAME TREE: one plan under /usr/bin/time -v
    /usr/bin/time -v "$BIN" plan --policy "$POLICY" --root "$2" --format json > "$WORK/plan-$1.json" 2> "$WORK/time-$1.txt"
    local rss wall
    rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$WORK/time-$1.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time-$1.txt")
    echo "$1: peak RSS $((rss / 1024)) MiB, wall $wall, $(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print(sum(s['actions'].values()), 'actions,', s['entriesScanned'], 'entries scanned')" "$WORK/plan-$1.json")"
}

BIGTREE=$(tree "$BIG")
echo "== peak memory at $BIG entries: $BIGTREE"
peak "$BIG" "$BIGTREE"
if [ "${STRESS:-0}" = 1 ]; then
    peak "$BIG-uncapped" "$(tree "$BIG" uncapped)"
fi
