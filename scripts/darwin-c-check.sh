#!/usr/bin/env bash
# darwin-c-check.sh (the repo's copy of ../shared/tools/darwin-c-check, so CI's clone does not depend on it):
# type-checks the C sources (Sources/CPosix/*.c) for Apple targets on this Linux machine, against the
# Darwin libc headers that Zig ships (PyPI package `ziglang`), with -Wall -Werror. Darwin's <sys/xattr.h> is not
# among Zig's headers, so the prototypes its man pages document are written here. Run from the project root:
#   scripts/darwin-c-check.sh             # every target; exit 1 on any error or warning, 2 when ziglang cannot install
#   scripts/darwin-c-check.sh --prepare   # only install ziglang (into $DARWIN_C_CHECK_VENV); what .ci/run does
# DarwinCCheckTests runs it in the suite (skipped with a message when ziglang cannot be installed: offline).
# It proves the __APPLE__ / TARGET_OS_* branches compile against Apple's declarations; it links and runs nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[[ -d $root/Sources/CPosix ]] || { echo "darwin-c-check: run it from the project root (no Sources/CPosix here)"; exit 2; }
venv=${DARWIN_C_CHECK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/darwin-c-check-venv}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
  python3 -m venv "$venv" >/dev/null 2>&1 && "$venv/bin/pip" install -q ziglang >/dev/null 2>&1 \
    || { echo "darwin-c-check: cannot install ziglang from PyPI"; exit 2; }
fi
[[ ${1:-} == --prepare ]] && { echo "darwin-c-check: ziglang ready in $venv"; exit 0; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/stub/sys" "$work/cache"
cat >"$work/stub/sys/xattr.h" <<'H'
#ifndef _SYS_XATTR_H_
#define _SYS_XATTR_H_
#include <sys/types.h>
#define XATTR_NOFOLLOW 0x0001
#define XATTR_CREATE 0x0002
#define XATTR_REPLACE 0x0004
#define XATTR_NOSECURITY 0x0008
#define XATTR_NODEFAULT 0x0010
#define XATTR_SHOWCOMPRESSION 0x0020
#define XATTR_NOFOLLOW_ANY 0x0040
#define XATTR_MAXNAMELEN 127
__BEGIN_DECLS
ssize_t getxattr(const char *path, const char *name, void *value, size_t size, u_int32_t position, int options);
ssize_t fgetxattr(int fd, const char *name, void *value, size_t size, u_int32_t position, int options);
int setxattr(const char *path, const char *name, const void *value, size_t size, u_int32_t position, int options);
int fsetxattr(int fd, const char *name, const void *value, size_t size, u_int32_t position, int options);
int removexattr(const char *path, const char *name, int options);
int fremovexattr(int fd, const char *name, int options);
ssize_t listxattr(const char *path, char *namebuff, size_t size, int options);
ssize_t flistxattr(int fd, char *namebuff, size_t size, int options);
__END_DECLS
#endif
H
inc=$("$venv/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "lib/libc/include/any-darwin-any"))')
export ZIG_GLOBAL_CACHE_DIR=$work/cache ZIG_LOCAL_CACHE_DIR=$work/cache
bad=0; n=0
for target in aarch64-macos x86_64-macos aarch64-ios; do
  extra=(); [[ $target == *ios ]] && extra=(-isystem "$inc")
  for f in "$root"/Sources/CPosix/*.c; do
    n=$((n+1))
    out=$(cd "$work" && "$venv/bin/python" -m ziglang cc -target "$target" -Wall -Werror -c -o "$work/x.o" \
      -I"$root/Sources/CPosix/include" "${extra[@]}" -idirafter "$work/stub" "$f" 2>&1 | grep -v 'unused-command-line-argument')
    if [[ -n $out ]] && grep -qE 'error|warning' <<<"$out"; then bad=$((bad+1)); echo "== $target ${f#$root/}"; echo "$out" | head -20; fi
  done
done
echo "darwin-c-check: $((n-bad)) of $n target/file compiles clean"
((bad == 0))
