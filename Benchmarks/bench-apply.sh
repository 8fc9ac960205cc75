#!/usr/bin/env bash
# apply of a 24h expiry over N entries (default 200,000) vs `systemd-tmpfiles --clean` doing the same
# deletions on identical copies of one tree, timed side by side with hyperfine. Writes only under $WORK.
#
#   Benchmarks/bench-apply.sh                  # N=200000, 3 runs each
#   N=50000 RUNS=5 Benchmarks/bench-apply.sh
#   FLAT=1 N=60000 Benchmarks/bench-apply.sh   # every file directly in tmp/, empty: the per-file overhead
#   COUNTS=1 FLAT=1 N=60000 Benchmarks/bench-apply.sh
#                                              # no timing: system calls (strace -c -f) and instructions
#                                              # (valgrind --tool=callgrind) of one run of each tool, which
#                                              # machine noise cannot move (Docs/performance.md)
#
# The tree: tmp/dNNNN/fNNNNN.dat, 1,000 files per directory, holding data (with FLAT=1 all of them in tmp/
# itself, empty), every other file 48 hours old (expired), the rest one hour old; directories one hour old, so
# neither tool removes one. Besides `policyctl apply` (file deletes roll forward, unlinked by worker threads) it
# times two older designs on the same tree: `POLICYCTL_STAGE_DELETES=1`, every delete staged, and
# `POLICYCTL_UNLINK_IN_PLACE=1`, each file unlinked by the run's own thread. Both tools judge by mtime (tmpfiles
# `m:24h`, the policy `by: mtime`): tmpfiles' default also looks at ctime, which a freshly copied tree has new.
# With the real planner `apply --policy` is timed (its walk included, as tmpfiles' is); without it, apply of
# a plan file made outside the timing (the report says which). The journal is always included.
set -euo pipefail

N=${N:-200000}
RUNS=${RUNS:-3}
WORK=${WORK:-/tmp/policyctl-bench-apply}
SCRATCH=${SCRATCH:-/tmp/build-apply}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
export PATH="/opt/swift/usr/bin:$PATH"

command -v systemd-tmpfiles >/dev/null || { echo "systemd-tmpfiles is required" >&2; exit 1; }
COUNTS=${COUNTS:-0}
if [ "$COUNTS" != 1 ] && ! command -v hyperfine >/dev/null; then
    echo "installing hyperfine..." >&2
    apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine; }
fi

BIN=${POLICYCTL:-}
if [ -z "$BIN" ]; then
    (cd "$REPO" && swift build -c release --scratch-path "$SCRATCH" >&2)
    BIN="$SCRATCH/release/policyctl"
fi

mkdir -p "$WORK"
FLAT=${FLAT:-0}
TEMPLATE="$WORK/template"
if [ ! -f "$TEMPLATE.done-$N-$FLAT" ]; then
    rm -rf "$TEMPLATE" "$TEMPLATE".done-*
    echo "generating $N entries in $TEMPLATE..." >&2
    python3 - "$TEMPLATE" "$N" "$FLAT" <<'EOF'
import os, sys, time
root, n, flat = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
now = time.time()
os.makedirs(root + "/tmp")
if flat:
    for i in range(n):
        p = f"{root}/tmp/f{i:06d}.dat"
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        age = 48 * 3600 if i % 2 == 0 else 3600
        os.utime(p, (now - age, now - age))
    os.utime(root + "/tmp", (now - 3600, now - 3600))
    sys.exit(0)
per = 1000
dirs = max(1, n // (per + 1))
for d in range(dirs):
    dp = f"{root}/tmp/d{d:04d}"
    os.mkdir(dp)
    for i in range(per):
        p = f"{dp}/f{i:05d}.dat"
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * ((i % 7) * 100))
        os.close(fd)
        age = 48 * 3600 if i % 2 == 0 else 3600
        os.utime(p, (now - age, now - age))
    os.utime(dp, (now - 3600, now - 3600))
EOF
    touch "$TEMPLATE.done-$N-$FLAT"
fi

POLICY="$WORK/policy.yaml"
cat > "$POLICY" <<'EOF'
version: 1
name: bench-apply
rules:
  - name: tmp-expiry
    path: tmp
    expire: { after: 24h, by: mtime }
EOF
echo "e $WORK/b/tmp - - - m:24h" > "$WORK/tmpfiles.conf"

# A plan file made outside the timing, for when the planner is not there yet.
cat > "$WORK/make-plan.py" <<'EOF'
import hashlib, json, os, sys, time
root, policy, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
now = time.time(); cutoff = now - 24 * 3600
actions = []; scanned = 0
for dp, dns, fns in os.walk(root + "/tmp"):
    scanned += len(dns) + len(fns)
    for f in fns:
        p = os.path.join(dp, f); st = os.lstat(p)
        if st.st_mtime < cutoff:
            actions.append({"action": "delete", "path": os.path.relpath(p, root), "rule": "tmp-expiry", "reason": "mtime > 24h",
                            "bytes": st.st_blocks * 512, "type": "file",
                            "identity": {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtimeNs": st.st_mtime_ns}})
actions.sort(key=lambda a: a["path"])
st = os.stat(root)
plan = {"version": 1, "policy": "bench-apply", "root": root, "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "evaluatedAtNs": int(now * 1e9), "actions": actions, "violations": [], "skipped": [], "notes": [],
        "summary": {"entriesScanned": scanned, "actions": {"delete": len(actions)}, "bytesFreed": 0, "violations": 0, "skipped": 0},
        "fingerprint": {"policySHA256": hashlib.sha256(open(policy, "rb").read()).hexdigest(), "policyPath": policy,
                        "rootDevice": st.st_dev, "rootInode": st.st_ino}}
json.dump(plan, open(out, "w"))
EOF

copy() { rm -rf "$WORK/$1" && cp -a "$TEMPLATE" "$WORK/$1" && sync; }

if "$BIN" plan --policy "$POLICY" --root "$TEMPLATE" --format json >/dev/null 2>&1; then
    MODE="apply --policy (planning walk included)"
    PREP_A="rm -rf $WORK/a && cp -a $TEMPLATE $WORK/a && sync"
    CMD_A="$BIN apply --policy $POLICY --root $WORK/a --yes"
else
    MODE="apply PLANFILE (the planner is not built yet: plan made outside the timing)"
    PREP_A="rm -rf $WORK/a && cp -a $TEMPLATE $WORK/a && python3 $WORK/make-plan.py $WORK/a $POLICY $WORK/plan.json && sync"
    CMD_A="$BIN apply $WORK/plan.json --yes"
fi
PREP_B="rm -rf $WORK/b && cp -a $TEMPLATE $WORK/b && sync"
CMD_B="systemd-tmpfiles --clean $WORK/tmpfiles.conf"
CMD_S="env POLICYCTL_STAGE_DELETES=1 $CMD_A"
CMD_P="env POLICYCTL_UNLINK_IN_PLACE=1 $CMD_A"

echo "checking that both delete the same set ($MODE)..." >&2
bash -c "$PREP_A" && bash -c "$CMD_A" >/dev/null
bash -c "$PREP_B" && bash -c "$CMD_B"
left() { (cd "$WORK/$1" && find . -path ./.policyctl -prune -o -printf '%P %y\n' | sort); }
if ! diff <(left a) <(left b) >/dev/null; then
    echo "FAIL: the two trees differ after cleaning" >&2
    diff <(left a) <(left b) | head >&2
    exit 1
fi
TOTAL=$(cd "$TEMPLATE" && find tmp -type f | wc -l)
REMAINING=$(cd "$WORK/a" && find tmp -type f | wc -l)
echo "both deleted the same $((TOTAL - REMAINING)) of $TOTAL files" >&2

if [ "$COUNTS" = 1 ]; then
    for tool in strace valgrind; do
        command -v $tool >/dev/null || apt-get install -y -qq $tool >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq $tool; }
    done
    count() {  # NAME PREP CMD: all system calls, statx, unlinkat, flock, then user-space instructions
        bash -c "$2"
        # shellcheck disable=SC2086  # the command is words, as hyperfine is given it
        strace -c -f -o "$WORK/strace-$1.txt" $3 >/dev/null
        bash -c "$2"
        # shellcheck disable=SC2086
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind-$1.out" $3 >/dev/null 2>"$WORK/callgrind-$1.log"
        python3 "$HERE/count-summary.py" "$1" 34 "$WORK/strace-$1.txt" "$WORK/callgrind-$1.log" statx unlinkat flock
    }
    echo "counts, one run each ($MODE):"
    count "policyctl apply" "$PREP_A" "$CMD_A"
    count "systemd-tmpfiles --clean" "$PREP_B" "$CMD_B"
    exit 0
fi

# Interleaved rounds (A B, then B A, ...): on a shared machine the load drifts, and one tool's runs all
# landing in a busy minute would say nothing about the tools. Each round's ratio is the figure that counts.
rm -f "$WORK"/round-*.json
for r in $(seq 1 "$RUNS"); do
    if [ $((r % 2)) -eq 1 ]; then
        hyperfine --runs 1 --style basic --export-json "$WORK/round-$r.json" \
            --prepare "$PREP_A" -n "policyctl apply" "$CMD_A" --prepare "$PREP_B" -n "systemd-tmpfiles --clean" "$CMD_B" \
            --prepare "$PREP_A" -n "policyctl apply (every delete staged)" "$CMD_S" \
            --prepare "$PREP_A" -n "policyctl apply (unlinked in place)" "$CMD_P"
    else
        hyperfine --runs 1 --style basic --export-json "$WORK/round-$r.json" \
            --prepare "$PREP_A" -n "policyctl apply (unlinked in place)" "$CMD_P" \
            --prepare "$PREP_A" -n "policyctl apply (every delete staged)" "$CMD_S" \
            --prepare "$PREP_B" -n "systemd-tmpfiles --clean" "$CMD_B" --prepare "$PREP_A" -n "policyctl apply" "$CMD_A"
    fi
done

python3 - "$WORK" "$RUNS" "$N" "$((TOTAL - REMAINING))" "$MODE" <<'EOF2'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
a, b, ratios = [], [], []
for r in range(1, runs + 1):
    res = {x["command"]: x for x in json.load(open(f"{work}/round-{r}.json"))["results"]}
    ta, tb = res["policyctl apply"]["mean"], res["systemd-tmpfiles --clean"]["mean"]
    a.append(ta); b.append(tb); ratios.append(ta / tb)
print(f"\n{sys.argv[3]} entries, {sys.argv[4]} deleted; mode: {sys.argv[5]}")
for r, (ta, tb, q) in enumerate(zip(a, b, ratios), 1):
    print(f"  round {r}: policyctl apply {ta:7.2f} s   systemd-tmpfiles --clean {tb:7.2f} s   ratio {q:.2f}x")
print(f"  policyctl apply            median {statistics.median(a):7.2f} s  min {min(a):7.2f} s")
print(f"  systemd-tmpfiles --clean   median {statistics.median(b):7.2f} s  min {min(b):7.2f} s")
print(f"  ratio: median of rounds {statistics.median(ratios):.2f}x, min/min {min(a) / min(b):.2f}x   (target: at most 1.0x)")
for name, label in (("every delete staged", "every delete staged (older design)"),
                    ("unlinked in place", "unlinked in place, no workers (older design)")):
    times = []
    for r in range(1, runs + 1):
        res = {x["command"]: x for x in json.load(open(f"{work}/round-{r}.json"))["results"]}
        times.append(res[f"policyctl apply ({name})"]["mean"])
    print(f"  {label}: median {statistics.median(times):7.2f} s, {statistics.median(times) / statistics.median(b):.2f}x tmpfiles")
EOF2
