#!/bin/sh
# Writes what one policyctl binary prints for every bundled policy and the benchmark policy over fixed trees,
# so two builds can be compared byte for byte (a restructuring must change none of it):
#   scripts/compare-outputs.sh trees DIR            make the trees once (times fixed, reused by both runs)
#   scripts/compare-outputs.sh run BIN TREES OUT    write BIN's outputs under OUT
#   diff -r OUT1 OUT2
# The clock is frozen with libfaketime (Debian's faketime, installed when missing) at one instant after the trees
# were made, so ages and thresholds come out the same in both runs; only what names the run (transaction ids,
# durations) is masked.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
# Reading a file (cp does) moves its atime, and rules judge by atime: the trees' times are saved once and put
# back before every use.
tree_times() {
    python3 - "$@" <<'PY'
import os, sys, json
verb, top = sys.argv[1], sys.argv[2]
saved = os.path.join(top, "times.json")
def entries():
    for tree in ("bench", "flat"):
        base = os.path.join(top, tree)
        yield base
        for folder, dirs, files in os.walk(base):
            for name in dirs + files:
                yield os.path.join(folder, name)
if verb == "save":
    table = {}
    for path in entries():
        st = os.lstat(path)
        table[os.fsencode(path).hex()] = [st.st_atime_ns, st.st_mtime_ns]
    json.dump(table, open(saved, "w"))
else:
    for key, (a, m) in json.load(open(saved)).items():
        os.utime(bytes.fromhex(key), ns=(a, m), follow_symlinks=False)
PY
}

case "$1" in
trees)
    dir=$2
    mkdir -p "$dir"
    python3 "$here/Benchmarks/generate-tree.py" "$dir/bench" 20000 --hostile --seed 7 >/dev/null
    python3 "$here/Benchmarks/generate-tree.py" "$dir/flat" 5000 --seed 3 >/dev/null
    date -u '+%Y-%m-%d %H:%M:%S' > "$dir/now"
    tree_times save "$dir"
    ;;
run)
    bin=$2 trees=$3 out=$4
    mkdir -p "$out"
    command -v faketime >/dev/null || apt-get install -y faketime >/dev/null
    # Frozen (no "@"): every call sees the same wall-clock instant; the monotonic clock stays real.
    stamp=$(cat "$trees/now")
    export DONT_FAKE_MONOTONIC=1
    tree_times restore "$trees"
    mask() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?/TIME/g; s/[0-9]+(\.[0-9]+)? ?(ms|s)\b/DUR/g; s/[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}/TX/g; s@/tmp/tmp\.[A-Za-z0-9]+@COPY@g; s/"(createdAt|started|finished|seconds|elapsed|pid)[^,}]*/"\1":X/g'; }
    runs() { # name, then the command
        name=$1; shift
        { faketime -f "$stamp" "$@" 2>&1; echo "exit $?"; } | mask > "$out/$name" || true
    }
    for policy in "$here"/Policies/*.yaml "$here/Benchmarks/bench-policy.yaml"; do
        p=$(basename "$policy" .yaml)
        runs "$p.validate" "$bin" validate "$policy"
        runs "$p.effective" "$bin" validate --effective "$policy"
        runs "$p.validate.json" "$bin" validate --format json "$policy"
        for tree in bench flat; do
            root="$trees/$tree"
            runs "$p.$tree.plan" "$bin" plan --policy "$policy" --root "$root"
            runs "$p.$tree.plan.json" "$bin" plan --policy "$policy" --root "$root" --format json
            for format in text json sarif junit github; do
                runs "$p.$tree.audit.$format" "$bin" audit --policy "$policy" --root "$root" --format "$format"
            done
            for path in tmp Documents/UserFiles Library/Caches/Thumbnails Documents/UserFiles/.Trash; do
                runs "$p.$tree.explain.$(echo $path | tr / _)" "$bin" explain --policy "$policy" --root "$root" "$path"
            done
        done
        # An apply on a copy, then its journal, for the journal's and the report's bytes.
        copy=$(mktemp -d)
        cp -a "$trees/bench/." "$copy/"
        tree_times restore "$trees"
        export XDG_STATE_HOME="$copy.state"
        runs "$p.apply" "$bin" apply --policy "$policy" --root "$copy" --yes --max-delete none
        runs "$p.journal" "$bin" journal --root "$copy"
        runs "$p.journal.json" "$bin" journal --root "$copy" --format json
        (cd "$copy" && find . -print | LC_ALL=C sort) > "$out/$p.after"
        rm -rf "$copy" "$copy.state"
    done
    runs schema.json "$bin" schema
    runs manpage "$bin" manpage
    for shell in bash zsh fish; do runs "completions.$shell" "$bin" completions "$shell"; done
    ;;
*) echo "usage: $0 trees DIR | run BIN TREES OUT" >&2; exit 64 ;;
esac
