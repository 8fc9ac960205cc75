#!/usr/bin/env bash
# The filesystem matrix: the end-to-end safety suites that depend on what a filesystem does (crash sweeps of
# apply and recover, roll-forward, bind mounts, the co-tenant, trash, xattrs, birth times, RENAME_NOREPLACE),
# run with every test tree on loop-mounted ext4, xfs and btrfs images, a tmpfs, an overlayfs (upper over a lower
# that holds a tree) and ext4 with casefold, each where this machine can make and mount it, skipped with a
# message otherwise. Known differences per filesystem: Docs/safety.md, "The filesystem matrix".
#
#   scripts/fs-matrix.sh                  # every filesystem, the default suites (make fs-matrix; .ci/run)
#   scripts/fs-matrix.sh xfs btrfs        # only these
#   FS_MATRIX_FILTER='CrashTests' scripts/fs-matrix.sh   # other suites (a swift test --filter regex)
#
# Needs a built test bundle (swift build --build-tests), root, losetup and the mkfs tools (e2fsprogs, xfsprogs,
# btrfs-progs). Each filesystem's suites run with POLICYCTL_TEST_SCRATCH at its mount (Tests' TestScratch). The last
# line is `fs-matrix: N passed, F failed, S skipped`; the exit status is 1 when one failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
DEFAULT_FILTER='CrashTests|RollForwardTests|CoTenantMountTests|CoTenantStateTests|CoTenantTrashTests|TrashCommandTests|TrashHardeningTests|ApplyTrashTests|ExtendedAttributeAccessTests|BirthTimeTests|NamingStyleEndToEndTests|DurabilityTests|ApplyIsolationTests|UndoTests'
FILTER="${FS_MATRIX_FILTER:-$DEFAULT_FILTER}"
WORK="${FS_MATRIX_DIR:-/tmp/policyctl-fs-matrix}"
ALL=(ext4 xfs btrfs tmpfs overlay ext4-casefold)
if [ $# -gt 0 ]; then WANT=("$@"); else WANT=("${ALL[@]}"); fi
BIN="$(swift build --show-bin-path 2>/dev/null)/policyctl"
passed=0; failed=0; skipped=0
mkdir -p "$WORK"
LOOP=""; MOUNTS=()

cleanup() {
  for ((i=${#MOUNTS[@]}-1; i>=0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null; done
  MOUNTS=()
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null; LOOP=""; fi
}
trap cleanup EXIT

skip() { echo "fs-matrix: $1: skipped: $2"; skipped=$((skipped+1)); cleanup; }

# Makes and mounts filesystem $1 at $WORK/$1/mnt; sets SCRATCH to the folder the suites' scratch goes in; returns
# 1 with the reason on stderr when this machine cannot. Not in a subshell: LOOP and MOUNTS must reach cleanup.
prepare() {
  local fs=$1 dir="$WORK/$1" img mkfs
  cleanup
  umount -R "$dir/mnt" 2>/dev/null; rm -rf "$dir"; mkdir -p "$dir/mnt"
  case $fs in
    tmpfs)
      mount -t tmpfs -o size=1g,mode=0755 policyctl-matrix "$dir/mnt" 2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
      MOUNTS+=("$dir/mnt"); SCRATCH="$dir/mnt"; return 0 ;;
    overlay)
      # Lower, upper and work on an ext4 image of their own (as overlay2 on a host's disk; an upper needs trusted.*
      # xattrs and d_type). With the layers on a tmpfs, two directories apply deleted whole came back in the
      # merged view (Docs/safety.md, "The filesystem matrix"). The lower holds the checker's tree, so the first
      # apply copies up, whites out and renames across the layers. redirect_dir=on: without it a folder of the
      # lower layer cannot be renamed (EXDEV), so a directory delete, which stages by rename, is skipped with
      # that errno on every run.
      mkdir -p "$dir/layers"
      truncate -s 1G "$dir/layers.img"
      mkfs.ext4 -q -F "$dir/layers.img" >"$dir/err" 2>&1 || { tail -3 "$dir/err" >&2; return 1; }
      LOOP=$(losetup --find --show "$dir/layers.img" 2>"$dir/err") || { cat "$dir/err" >&2; LOOP=""; return 1; }
      mount "$LOOP" "$dir/layers" 2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
      MOUNTS+=("$dir/layers")
      mkdir -p "$dir/layers/lower/tree" "$dir/layers/upper" "$dir/layers/work"
      python3 - "$dir/layers/lower/tree" <<'PY' || return 1
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("pl", "scripts/power-loss.py"); pl = importlib.util.module_from_spec(spec); spec.loader.exec_module(pl)
os.makedirs(sys.argv[1] + "/root"); pl.build_tree(sys.argv[1] + "/root", sys.argv[1] + "/outside")
PY
      mount -t overlay overlay -o "lowerdir=$dir/layers/lower,upperdir=$dir/layers/upper,workdir=$dir/layers/work,redirect_dir=on" "$dir/mnt" \
        2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
      MOUNTS+=("$dir/mnt"); mkdir -p "$dir/mnt/scratch"; SCRATCH="$dir/mnt/scratch"; return 0 ;;
    ext4) mkfs=(mkfs.ext4 -q -F) ;;
    ext4-casefold) mkfs=(mkfs.ext4 -q -F -O casefold -E encoding=utf8) ;;
    xfs) mkfs=(mkfs.xfs -q -f) ;;
    btrfs) mkfs=(mkfs.btrfs -q -f) ;;
    *) echo "unknown filesystem" >&2; return 1 ;;
  esac
  command -v "${mkfs[0]}" >/dev/null || { echo "${mkfs[0]} is not installed" >&2; return 1; }
  img="$dir/disk.img"
  truncate -s 1G "$img"
  "${mkfs[@]}" "$img" >"$dir/err" 2>&1 || { tail -3 "$dir/err" >&2; return 1; }
  LOOP=$(losetup --find --show "$img" 2>"$dir/err") || { cat "$dir/err" >&2; LOOP=""; return 1; }
  if ! mount "$LOOP" "$dir/mnt" 2>"$dir/err"; then
    # The kernel's own reason when it gave one (casefold needs CONFIG_UNICODE, for example).
    { dmesg 2>/dev/null | grep -iE "loop|ext4|xfs|btrfs" | tail -1 | sed 's/^\[[^]]*\] //' | grep . || head -1 "$dir/err"; } >&2
    return 1
  fi
  MOUNTS+=("$dir/mnt")
  chmod 0755 "$dir/mnt"
  if [ "$fs" = ext4-casefold ]; then
    # Case folding is a folder attribute, set on an empty folder and inherited by what is made in it.
    mkdir "$dir/mnt/scratch" && chattr +F "$dir/mnt/scratch" 2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
    SCRATCH="$dir/mnt/scratch"; return 0
  fi
  SCRATCH="$dir/mnt"
}

for fs in "${WANT[@]}"; do
  SCRATCH=""
  if ! prepare "$fs" 2>"$WORK/why"; then skip "$fs" "$(tr '\n' ' ' <"$WORK/why")"; continue; fi
  scratch=$SCRATCH
  log="$WORK/$fs.log"
  start=$(date +%s)
  ok=1
  if [ "$fs" = overlay ]; then
    # The tree already in the lower layer: apply through the overlay, compared with the same apply on a plain folder.
    python3 scripts/power-loss.py --binary "$BIN" --tree-check "$WORK/overlay/mnt/tree/root" --tree-present >"$log" 2>&1 || ok=0
  fi
  POLICYCTL_TEST_SCRATCH="$scratch" swift test --skip-build --filter "$FILTER" >>"$log" 2>&1 || ok=0
  summary=$(grep -E "^(✔|✘|􁁛|􀢄|.*Test run with)" "$log" | tail -1)
  if [ $ok = 1 ]; then
    passed=$((passed+1)); echo "fs-matrix: $fs: passed in $(( $(date +%s) - start )) s: ${summary:-(no summary)}"
  else
    failed=$((failed+1)); echo "fs-matrix: $fs: FAILED in $(( $(date +%s) - start )) s (log: $log): ${summary:-(no summary)}"
    grep -E "✘|failed|Expectation failed|tree-check:.*(FAILED|differs)" "$log" | head -20 | sed 's/^/    /'
  fi
  cleanup
done
echo "fs-matrix: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
