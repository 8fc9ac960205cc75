#!/usr/bin/env python3
"""power-loss: what a power cut can leave of apply, recover, undo and trash, and whether recover mends it.

Records what each command does to the filesystem (`strace -f -y`, every call that changes a file, a folder or
an attribute, and every fsync/fdatasync), then builds the states a power cut at each point can leave and, for
each, runs the real binary's `recover` and then the next `apply`, and checks the contract (Docs/journal.md,
"Units of change"; Docs/safety.md, "Power loss"):

  * recover exits 0 and the journal is readable: every line parses, every transaction ends;
  * a committed transaction is exactly *after*; any other is exactly *before* except the roll-forward file
    deletes whose `unlink` intent survived (and has no skip or kept record), which are *after*; a transaction
    whose begin record did not survive is exactly *before*;
  * nothing outside the plan changed: the manifest of the root (every entry, type, size, content hash,
    original mtime, xattrs, symlink target) and of a folder outside it holding a file hard-linked inside;
  * the next `apply` exits 0 and reaches what it reaches from the clean before (or after) state.

The persistence models (Docs/safety.md, "Power loss: the model"): `posix` (ALICE's abstract persistence model,
what every filesystem promises: an operation is durable only once the file or folder it changed is fsynced;
before that it may be lost, and operations on different files and folders persist in any order; those on one
file or folder persist in order, a file's appended data as a prefix, possibly torn) and `ext4` (data=ordered:
namespace and attribute changes persist in program order, a prefix of them; an fsync commits every such
change up to the synced inode's last one; file data persists only when that file is fsynced, in any order with
the rest). For every crash point the explored states are: everything so far persisted; only what is durable;
everything but one operation that is not yet durable (with what must go with it); a torn last append.

The commands are data (COMMANDS below): each names its starting tree (built by steps run on a fresh
filesystem image) and its command line. The quarantine purge of issue 50 goes in as one more entry.

  scripts/power-loss.py                 # every command, both models (make power-loss)
  scripts/power-loss.py --short         # a few hundred states (the suite's PowerLossTests)
  scripts/power-loss.py --only apply    # one command
  POLICYCTL=/path/to/policyctl ...      # which binary (default .build/debug/policyctl, then release)

Needs root (loop mounts), strace and mkfs.ext4. The last line is exactly
`power-loss: N crash states, V violations`; the exit status is 1 when V > 0, 2 when it cannot run.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# ---------------------------------------------------------------------------------------------------------------
# The tree and the policy every command runs on.

POLICY = """version: 1
name: power-loss
layout:
  - app
  - path: cache
    backup: exclude
    cacheTag: true
  - cache/sub
rules:
  - name: expire
    path: tmp
    expire: 1h
  - name: naming
    path: docs
    exclude: ['.Trash/**']
    naming: { case: lower }
  - name: trash
    path: docs/.Trash
    trash: { retain: 30d }
  - name: apptrash
    path: apptrash
    trash: { retain: 30d }
  - name: forbid
    path: docs
    forbid: ['*.sqlite', '*.db']
  - name: backup
    path: .
    match: [lib, cache]
    backup: { exclude: true, cacheTag: true }
"""

DAY = 86400


def build_tree(root, outside):
    """The starting tree: every kind of change apply makes has something to act on."""
    now = time.time()
    old = now - 2 * DAY

    def d(p, age=None):
        os.makedirs(os.path.join(root, p), exist_ok=True)

    def f(p, size, age=old, xattrs=None, base=root):
        path = os.path.join(base, p)
        with open(path, "wb") as fh:
            fh.write(bytes([0x61 + (len(p) % 20)]) * size)
        for k, v in (xattrs or {}).items():
            os.setxattr(path, k, v.encode())
        os.utime(path, (age, age))

    for p in ["tmp", "tmp/sub", "tmp/sub/deep", "tmp/tree", "tmp/tree/a", "tmp/tree/a/b", "docs", "docs/.Trash",
              "docs/.Trash/files", "docs/.Trash/info", "lib", "apptrash", "keep"]:
        d(p)
    f("tmp/old1", 100); f("tmp/old2", 2000); f("tmp/old3", 0); f("tmp/fresh", 10, age=now - 60)
    f("tmp/sub/deep/x", 5); f("tmp/sub/y", 6); f("tmp/tree/a/b/c", 7); f("tmp/tree/a/d", 8)
    os.symlink("/etc", os.path.join(root, "tmp/link"))
    f("docs/UP.TXT", 3); f("docs/Notes.sqlite", 4, xattrs={"user.keep": "yes"}); f("docs/private.db", 5)
    f("docs/readme.md", 9); f("docs/report.txt", 11); f("keep/a.txt", 12); f("keep/b.txt", 13)
    os.setxattr(os.path.join(root, "lib"), "user.test", b"1")
    os.makedirs(outside, exist_ok=True)
    f("file", 42, base=outside)
    os.link(os.path.join(outside, "file"), os.path.join(root, "tmp/hardlink"))
    for p in ["tmp/sub/deep", "tmp/sub", "tmp/tree/a/b", "tmp/tree/a", "tmp/tree", "tmp"]:
        os.utime(os.path.join(root, p), (old, old))


# ---------------------------------------------------------------------------------------------------------------
# Commands: each is data. `start` is a list of steps that make its starting tree on a fresh image; `run` the
# command line recorded (ROOT, POLICY are substituted; TX is the transaction the setup's apply made).

COMMANDS = [
    {"name": "apply", "start": [], "run": ["apply", "--policy", "POLICY", "--root", "ROOT", "--yes"]},
    # A power cut during apply, before its commit record: the starting tree is one of apply's own crash states
    # (everything up to that point persisted); recover rolls it back.
    {"name": "recover-rollback", "start": [("crash-apply", "before-commit")], "run": ["recover", "--root", "ROOT"],
     "reference": "apply"},
    # ... and after the commit record, before the end record: recover finishes the purge.
    {"name": "recover-purge", "start": [("crash-apply", "after-commit")], "run": ["recover", "--root", "ROOT"],
     "reference": "apply"},
    {"name": "trash", "start": [("apply",)],
     "run": ["trash", "--root", "ROOT", "--policy", "POLICY", "docs/readme.md", "keep/a.txt"]},
    {"name": "trash-app", "start": [("apply",)],
     "run": ["trash", "--root", "ROOT", "--trash-dir", "apptrash", "docs/report.txt", "keep/b.txt"]},
    {"name": "restore", "start": [("apply",), ("run", ["trash", "--root", "ROOT", "--policy", "POLICY", "docs/readme.md"])],
     "run": ["trash", "--root", "ROOT", "--policy", "POLICY", "--restore", "readme.md"]},
    # Exit 1: the apply's deletes cannot be undone (each is named); everything else is.
    {"name": "undo", "start": [("apply",)], "run": ["undo", "--root", "ROOT", "--yes", "TX"], "exit": [1]},
    # Issue 50 (the quarantine) adds its journaled purge here, e.g.
    # {"name": "quarantine-purge", "start": [("apply",)], "run": ["quarantine", "--root", "ROOT", "--purge", "--yes"]},
]

APPLY = ["apply", "--policy", "POLICY", "--root", "ROOT", "--yes"]

# ---------------------------------------------------------------------------------------------------------------
# Small helpers.


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, check=True, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-400:]}")
    return r


class Disk:
    """One small ext4 image on one loop device, mounted at one path: every state is written back onto the same
    device, so the root keeps its device and inode numbers (the journal's begin record binds them) and every
    entry of the starting tree keeps its inode (the intents' identities)."""

    SIZE = 8 << 20

    def __init__(self, scratch):
        self.scratch = scratch
        # The images live in memory: every fsync the binary makes on the loop device ends in the backing file,
        # and on a disk each cost milliseconds.
        sh(["mount", "-t", "tmpfs", "-o", "size=768m,mode=0755", "power-loss", scratch])
        self.image = os.path.join(scratch, "disk.img")
        self.mnt = os.path.join(scratch, "m")
        os.makedirs(self.mnt, exist_ok=True)
        with open(self.image, "wb") as fh:
            fh.truncate(self.SIZE)
        sh(["mkfs.ext4", "-q", "-F", "-b", "1024", "-I", "256", "-O", "^metadata_csum,^64bit", self.image])
        self.dev = sh(["losetup", "--find", "--show", self.image]).stdout.decode().strip()
        self.mounted = False

    @property
    def root(self):
        return os.path.join(self.mnt, "root")

    @property
    def outside(self):
        return os.path.join(self.mnt, "outside")

    def mount(self):
        sh(["mount", "-t", "ext4", "-o", "user_xattr", self.dev, self.mnt])
        self.mounted = True

    def umount(self):
        if self.mounted:
            for _ in range(100):
                r = sh(["umount", self.mnt], check=False)
                if r.returncode == 0:
                    break
                time.sleep(0.1)
            else:
                # Never lazily: writing the next state onto the device under a filesystem still alive corrupts it
                # (a kernel BUG in jbd2 was seen so). Stop the run instead.
                raise RuntimeError(f"cannot unmount {self.mnt}: {r.stderr.decode(errors='replace').strip()}")
            self.mounted = False

    def save(self, name):
        """The device's content now (unmounted), as a file to load back."""
        assert not self.mounted
        path = os.path.join(self.scratch, name + ".img")
        with open(self.dev, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return path

    def load(self, path):
        assert not self.mounted
        with open(path, "rb") as src:
            data = src.read()
        # Through the device itself (its page cache is the one the next mount reads), never to the file behind it;
        # O_EXCL: a block device still mounted anywhere refuses it (EBUSY), so a live filesystem is never overwritten.
        fd = os.open(self.dev, os.O_WRONLY | os.O_EXCL)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def close(self):
        try:
            self.umount()
        finally:
            sh(["losetup", "-d", self.dev], check=False)
            sh(["umount", self.scratch], check=False)


def subst(args, ctx):
    out = []
    for a in args:
        a = a.replace("ROOT", ctx["root"]).replace("POLICY", ctx["policy"])
        if a == "TX":
            a = ctx.get("tx", "")
        out.append(a)
    return out


def run_binary(ctx, args, env=None, timeout=120):
    e = dict(os.environ)
    e.pop("POLICYCTL_FAULTS", None)
    e.update({"NO_COLOR": "1", "LC_ALL": "C"})
    if env:
        e.update(env)
    return subprocess.run([ctx["binary"]] + subst(args, ctx), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=e, timeout=timeout, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------------------------------------------------------
# Manifests: what "the tree" is, for before/after comparisons.


def manifest(root, started):
    """Sorted lines PATH TYPE ...; entries under .policyctl are engine state and left out. A file's mtime is
    shown when it predates the run (`started`), else `new`; a `.trashinfo` by its size only (it holds the
    deletion time); the trash stamp xattr by its presence."""
    lines = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [n for n in dirnames if n != ".policyctl" and not n.startswith(".policyctl-staging-")]
            filenames = [n for n in filenames if n != ".policyctl"]
        names = sorted(dirnames + filenames)
        for name in names:
            p = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(p)
            if stat.S_ISDIR(st.st_mode):
                line = f"{rel} dir mode={oct(st.st_mode & 0o7777)}"
            elif stat.S_ISLNK(st.st_mode):
                line = f"{rel} symlink -> {os.readlink(p)}"
            elif stat.S_ISREG(st.st_mode):
                mt = "new" if st.st_mtime_ns > started else str(st.st_mtime_ns)
                if name.endswith(".trashinfo"):
                    line = f"{rel} file size={st.st_size}"
                else:
                    with open(p, "rb") as fh:
                        h = hashlib.sha1(fh.read()).hexdigest()[:12]
                    line = f"{rel} file size={st.st_size} sha={h} mtime={mt}"
            else:
                line = f"{rel} other"
            if not stat.S_ISLNK(st.st_mode):
                for x in sorted(os.listxattr(p, follow_symlinks=False)):
                    v = os.getxattr(p, x, follow_symlinks=False)
                    line += f" {x}=" + ("*" if x in ("user.policyctl.trashed", "user.policyctl.origin") else v.hex())
            lines.append(line)
    return sorted(lines)


def outside_manifest(outside):
    p = os.path.join(outside, "file")
    try:
        with open(p, "rb") as fh:
            data = fh.read()
        st = os.lstat(p)
        return f"{len(data)} {hashlib.sha1(data).hexdigest()[:12]} {st.st_mtime_ns} {sorted(os.listxattr(p))}"
    except OSError as e:
        return f"missing: {e}"


def journal_records(root):
    """(records, bad lines) of ROOT/.policyctl/journal.jsonl."""
    path = os.path.join(root, ".policyctl", "journal.jsonl")
    if not os.path.exists(path):
        return [], []
    recs, bad = [], []
    with open(path, "rb") as fh:
        data = fh.read()
    for i, line in enumerate(data.split(b"\n")):
        if not line:
            continue
        try:
            recs.append(json.loads(line)["rec"])
        except (ValueError, KeyError):
            bad.append(i + 1)
    if data and not data.endswith(b"\n"):
        bad.append("torn tail")
    return recs, bad


def rolled_forward(records, tx):
    """Paths of the roll-forward deletes of `tx` that recovery finishes: unlink intents without a skip record
    for their action or a kept record for their op."""
    unlinks, skipped, kept = {}, set(), set()
    for r in records:
        if r.get("tx") != tx:
            continue
        if r.get("type") == "intent" and r.get("change") == "unlink":
            unlinks[r["op"]] = (r["action"], r.get("path"))
        elif r.get("type") == "skip":
            skipped.add(r.get("action"))
        elif r.get("type") == "kept" and "op" in r:
            kept.add(r["op"])
    return {p for op, (a, p) in unlinks.items() if a not in skipped and op not in kept}


# ---------------------------------------------------------------------------------------------------------------
# Recording: strace -f -y, parsed into operations on paths.

TRACED = ("open,openat,openat2,creat,write,pwrite64,writev,pwritev,pwritev2,ftruncate,truncate,fallocate,"
          "unlink,unlinkat,rmdir,rename,renameat,renameat2,mkdir,mkdirat,symlink,symlinkat,link,linkat,"
          "setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,utimensat,futimesat,utimes,"
          "chmod,fchmod,fchmodat,fchown,fchownat,lchown,chown,fsync,fdatasync,sync_file_range,syncfs,sync,"
          "close,dup,dup2,dup3,fcntl,lseek")

LINE = re.compile(r"^(\d+)\s+(.*)$")
CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|0x[0-9a-f]+)(<[^>]*>)?(?:\s.*)?$", re.S)
FDARG = re.compile(r"^(-?\d+|AT_FDCWD)(?:<(.*)>)?$", re.S)


def unescape(s):
    """strace's -xx quoted string (\\xNN escapes) to bytes."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x":
                out.append(int(s[i + 2:i + 4], 16)); i += 4; continue
            m = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "\\": 92, '"': 34}.get(n)
            if m is not None:
                out.append(m); i += 2; continue
            if n.isdigit():
                j = i + 1
                while j < len(s) and j < i + 4 and s[j].isdigit():
                    j += 1
                out.append(int(s[i + 1:j], 8) & 0xFF); i = j; continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return bytes(out)


def split_args(s):
    """Top-level comma split of an argument list, respecting quotes, brackets and <...> fd paths."""
    args, depth, cur, q, i = [], 0, [], False, 0
    while i < len(s):
        c = s[i]
        if q:
            cur.append(c)
            if c == "\\" and i + 1 < len(s):
                cur.append(s[i + 1]); i += 2; continue
            if c == '"':
                q = False
        elif c == '"':
            q = True; cur.append(c)
        elif c in "[{(<":
            depth += 1; cur.append(c)
        elif c in "]})>":
            depth -= 1; cur.append(c)
        elif c == "," and depth == 0:
            args.append("".join(cur).strip()); cur = []
        else:
            cur.append(c)
        i += 1
    if cur:
        args.append("".join(cur).strip())
    return args


def qstr(a):
    """A quoted string argument (possibly followed by '...') as bytes."""
    a = a.strip()
    if a.endswith("..."):
        a = a[:-3]
    if a.startswith('"') and a.endswith('"'):
        return unescape(a[1:-1])
    return None


def fdpath(a):
    m = FDARG.match(a.strip())
    if not m:
        return None, None
    fd = m.group(1)
    p = m.group(2)
    if p is not None:
        p = unescape(p).decode("utf-8", "surrogateescape")
    return fd, p


class Op:
    __slots__ = ("i", "kind", "path", "path2", "data", "offset", "append", "mode", "value", "name", "nodes",
                 "deps", "meta", "creates", "synced", "line", "length", "flags", "times", "uid", "gid", "empties", "inner", "moved")

    def __init__(self, kind, **kw):
        self.kind = kind
        for k in self.__slots__:
            if k not in ("kind",):
                setattr(self, k, kw.get(k))
        self.nodes = kw.get("nodes") or []
        self.deps = set()
        self.creates = kw.get("creates")

    def __repr__(self):
        extra = f" -> {self.path2}" if self.path2 else ""
        if self.kind == "write":
            extra = f" {len(self.data)} bytes at {'end' if self.append else self.offset}"
        if self.kind in ("setxattr", "removexattr"):
            extra = f" {self.name}"
        return f"#{self.i} {self.kind} {self.path}{extra}"


def parse_trace(path, mnt, existing):
    """The operations under `mnt`, in the order they completed. `existing`: paths (absolute) present before."""
    pending = {}
    fds = {}          # fd number -> path (the -y annotations keep it current)
    fdflags = {}      # fd -> (append, offset)
    ops = []
    nodes = {}        # path -> node id
    counter = [0]
    exists = set(existing)

    def node(p):
        if p not in nodes:
            counter[0] += 1
            nodes[p] = counter[0]
        return nodes[p]

    def new_node(p):
        counter[0] += 1
        nodes[p] = counter[0]
        return counter[0]

    def move_nodes(a, b):
        moved = {}
        for p in list(nodes):
            if p == a or p.startswith(a + "/"):
                moved[b + p[len(a):]] = nodes.pop(p)
        for p in list(nodes):
            if p == b or p.startswith(b + "/"):
                nodes.pop(p)
        nodes.update(moved)
        for p in list(exists):
            if p == a or p.startswith(a + "/"):
                exists.discard(p); exists.add(b + p[len(a):])

    def under(p):
        return p is not None and (p == mnt or p.startswith(mnt + "/"))

    def resolve(dirarg, namearg):
        name = qstr(namearg)
        if name is None:
            return None
        name = name.decode("utf-8", "surrogateescape")
        m = re.match(r"^/proc/self/fd/(\d+)(/.*)?$", name)
        if m:
            base = fds.get(m.group(1))
            return None if base is None else base + (m.group(2) or "")
        if name.startswith("/"):
            return os.path.normpath(name)
        fd, dp = fdpath(dirarg) if dirarg is not None else ("AT_FDCWD", None)
        if dp is None and fd == "AT_FDCWD":
            return None
        if dp is None:
            dp = fds.get(fd)
        if dp is None:
            return None
        if name == "":
            return dp
        return os.path.normpath(dp + "/" + name)

    def fd_of(a):
        fd, p = fdpath(a)
        if p is not None and fd is not None:
            fds[fd] = p
        return fd, (p if p is not None else fds.get(fd))

    def parent(p):
        return os.path.dirname(p)

    def add(op):
        op.i = len(ops)
        ops.append(op)

    with open(path, "r", encoding="latin-1") as fh:
        raw = fh.read().split("\n")
    for rawline in raw:
        m = LINE.match(rawline)
        if not m:
            continue
        pid, rest = m.group(1), m.group(2)
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        r = re.match(r"^<\.\.\. (\w+) resumed>(.*)$", rest, re.S)
        if r:
            rest = pending.pop(pid, r.group(1) + "(") + r.group(2)
        if rest.startswith("+++") or rest.startswith("---"):
            continue
        c = CALL.match(rest)
        if not c:
            continue
        name, argstr, ret, retpath = c.group(1), c.group(2), c.group(3), c.group(4)
        try:
            retv = int(ret, 0)
        except ValueError:
            continue
        if retv < 0:
            continue
        args = split_args(argstr)
        line = rawline[:300]

        if name in ("open", "openat", "openat2", "creat"):
            if name == "open" or name == "creat":
                p = resolve(None, args[0]) if args[0].startswith('"/') else None
                flagstr = args[1] if len(args) > 1 and name == "open" else "O_CREAT|O_WRONLY|O_TRUNC"
                modestr = args[2] if len(args) > 2 else "0"
            else:
                p = resolve(args[0], args[1])
                flagstr = args[2] if len(args) > 2 else ""
                modestr = args[3] if len(args) > 3 else "0"
                if name == "openat2":
                    mm = re.search(r"flags=([A-Z_|0-9x]+)", argstr)
                    flagstr = mm.group(1) if mm else ""
                    mm = re.search(r"mode=(0[0-7]*)", argstr)
                    modestr = mm.group(1) if mm else "0"
            if retpath:
                rp = unescape(retpath[1:-1]).decode("utf-8", "surrogateescape")
                fds[str(retv)] = rp
                p = p or rp
            elif p is not None:
                fds[str(retv)] = p
            fdflags[str(retv)] = ["O_APPEND" in flagstr, 0]
            if under(p) and "O_CREAT" in flagstr and p not in exists:
                try:
                    mode = int(modestr, 8)
                except ValueError:
                    mode = 0o600
                add(Op("create", path=p, mode=mode, nodes=[node(parent(p))], meta=True, creates=new_node(p), line=line))
                exists.add(p)
            elif under(p) and "O_TRUNC" in flagstr and p in exists:
                add(Op("truncate", path=p, length=0, nodes=[node(p)], meta=True, line=line))
            continue
        if name in ("dup", "dup2", "dup3") or (name == "fcntl" and "F_DUPFD" in argstr):
            fd, p = fd_of(args[0])
            if p is not None:
                fds[str(retv)] = p
                fdflags[str(retv)] = fdflags.get(fd, [False, 0])
            continue
        if name == "close":
            fd, _ = fdpath(args[0])
            fds.pop(fd, None); fdflags.pop(fd, None)
            continue
        if name == "lseek":
            fd, _ = fd_of(args[0])
            if fd in fdflags:
                fdflags[fd][1] = retv
            continue
        if name in ("write", "pwrite64", "writev", "pwritev", "pwritev2"):
            fd, p = fd_of(args[0])
            if not under(p) or p.endswith(" (deleted)"):
                if fd in fdflags and name == "write":
                    fdflags[fd][1] += retv
                continue
            if name in ("write", "pwrite64"):
                data = qstr(args[1])
            else:
                data = b"".join(unescape(x) for x in re.findall(r'iov_base="((?:[^"\\]|\\.)*)"', args[1]))
            if data is None:
                continue
            data = data[:retv]
            flags = fdflags.setdefault(fd, [False, 0])
            if name in ("pwrite64", "pwritev", "pwritev2"):
                off, app = int(args[-1] if name == "pwrite64" else args[3], 0), False
            elif flags[0]:
                off, app = None, True
            else:
                off, app = flags[1], False
                flags[1] += retv
            add(Op("write", path=p, data=data, offset=off, append=app, nodes=[node(p)], meta=False, line=line))
            continue
        if name in ("ftruncate", "truncate"):
            if name == "ftruncate":
                _, p = fd_of(args[0])
            else:
                p = resolve(None, args[0])
            if under(p) and not p.endswith(" (deleted)"):
                add(Op("truncate", path=p, length=int(args[1], 0), nodes=[node(p)], meta=True, line=line))
            continue
        if name == "fallocate":
            _, p = fd_of(args[0])
            if under(p) and not p.endswith(" (deleted)"):
                add(Op("fallocate", path=p, offset=int(args[2], 0), length=int(args[3], 0), nodes=[node(p)],
                       meta=True, line=line))
            continue
        if name in ("unlink", "unlinkat", "rmdir"):
            if name == "unlinkat":
                p = resolve(args[0], args[1]); rmd = "AT_REMOVEDIR" in args[2]
            else:
                p = resolve(None, args[0]); rmd = name == "rmdir"
            if under(p):
                op = Op("rmdir" if rmd else "unlink", path=p, nodes=[node(parent(p))], meta=True, line=line)
                if rmd:
                    op.empties = node(p)
                add(op)
                nodes.pop(p, None); exists.discard(p)
            continue
        if name in ("rename", "renameat", "renameat2"):
            if name == "rename":
                a, b, fl = resolve(None, args[0]), resolve(None, args[1]), ""
            else:
                a, b = resolve(args[0], args[1]), resolve(args[2], args[3])
                fl = args[4] if len(args) > 4 else ""
            if under(a) or under(b):
                ns = sorted({node(parent(a)), node(parent(b))})
                # The moved inode's stream too (ALICE: a rename is an operation on the file it moves): what is done
                # to that inode later never persists without the rename. Durability needs only the folders.
                add(Op("rename", path=a, path2=b, flags=fl, nodes=ns, meta=True, line=line, moved=node(a)))
                move_nodes(a, b)
                exists.add(b)
            continue
        if name in ("mkdir", "mkdirat"):
            p = resolve(args[0], args[1]) if name == "mkdirat" else resolve(None, args[0])
            mode = int((args[2] if name == "mkdirat" else args[1]), 8)
            if under(p):
                add(Op("mkdir", path=p, mode=mode, nodes=[node(parent(p))], meta=True, creates=new_node(p), line=line))
                exists.add(p)
            continue
        if name in ("symlink", "symlinkat"):
            target = qstr(args[0])
            p = resolve(args[1], args[2]) if name == "symlinkat" else resolve(None, args[1])
            if under(p):
                add(Op("symlink", path=p, value=target, nodes=[node(parent(p))], meta=True, creates=new_node(p), line=line))
                exists.add(p)
            continue
        if name in ("link", "linkat"):
            a, b = (resolve(args[0], args[1]), resolve(args[2], args[3])) if name == "linkat" else \
                (resolve(None, args[0]), resolve(None, args[1]))
            if under(b):
                add(Op("link", path=a, path2=b, nodes=[node(parent(b)), node(a)], meta=True, line=line))
                exists.add(b)
            continue
        if name in ("setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"):
            if name.startswith("f"):
                _, p = fd_of(args[0])
            else:
                p = resolve(None, args[0])
            if not under(p):
                continue
            xname = qstr(args[1]).decode("utf-8", "surrogateescape")
            if "setxattr" in name:
                value = qstr(args[2]) or b""
                value = value[: int(args[3], 0)]
                add(Op("setxattr", path=p, name=xname, value=value, nodes=[node(p)], meta=True, line=line))
            else:
                add(Op("removexattr", path=p, name=xname, nodes=[node(p)], meta=True, line=line))
            continue
        if name == "utimensat":
            if args[1] == "NULL":
                fd, p = fd_of(args[0])
            else:
                p = resolve(args[0], args[1])
            if under(p):
                ts = re.findall(r"tv_sec=(\d+)(?:\s*/\*[^*]*\*/)?, tv_nsec=(\w+)", args[2])
                times = []
                for s, n in ts:
                    times.append(None if n in ("UTIME_OMIT",) else (int(s) * 10**9 + (int(n) if n.isdigit() else 0)))
                add(Op("utimes", path=p, times=times, nodes=[node(p)], meta=True, line=line))
            continue
        if name in ("fchmod", "fchmodat", "chmod"):
            if name == "fchmod":
                _, p = fd_of(args[0]); mode = int(args[1], 8)
            elif name == "fchmodat":
                p = resolve(args[0], args[1]); mode = int(args[2], 8)
            else:
                p = resolve(None, args[0]); mode = int(args[1], 8)
            if under(p) and not p.endswith(" (deleted)"):
                add(Op("chmod", path=p, mode=mode, nodes=[node(p)], meta=True, line=line))
            continue
        if name in ("fchown", "fchownat", "chown", "lchown"):
            if name == "fchown":
                _, p = fd_of(args[0]); u, g = args[1], args[2]
            elif name == "fchownat":
                p = resolve(args[0], args[1]); u, g = args[2], args[3]
            else:
                p = resolve(None, args[0]); u, g = args[1], args[2]
            if under(p) and not p.endswith(" (deleted)"):
                add(Op("chown", path=p, uid=int(u), gid=int(g), nodes=[node(p)], meta=True, line=line))
            continue
        if name in ("fsync", "fdatasync", "sync_file_range"):
            _, p = fd_of(args[0])
            if under(p) and not p.endswith(" (deleted)"):
                add(Op("fsync", path=p, nodes=[node(p)], meta=False, value=name, line=line))
            continue
        if name in ("syncfs", "sync"):
            add(Op("syncall", path=mnt, nodes=[], meta=False, line=line))
            continue
    # Dependencies: an operation needs the operations that created each node it names.
    # An rmdir needs every earlier change of the folder's entries: a folder is removed once it is empty.
    creator = {}
    on_node = {}
    for op in ops:
        for n in op.nodes:
            if n in creator and creator[n] != op.i:
                op.deps.add(creator[n])
        if op.empties is not None:
            op.inner = set(on_node.get(op.empties, []))
            op.deps |= op.inner
        if op.kind not in ("fsync", "syncall"):
            for n in op.nodes:
                on_node.setdefault(n, []).append(op.i)
        if op.creates is not None:
            creator[op.creates] = op.i
    return ops


# ---------------------------------------------------------------------------------------------------------------
# The persistence models: which states a crash after operation k can leave.


def mutations(ops):
    return [op for op in ops if op.kind not in ("fsync", "syncall")]


def durable_set(ops, k, model):
    """Indices of the operations among the first k that no power cut can lose."""
    done = set()
    if model == "posix":
        synced_after = {}
        # Walk backwards: an op is durable when every node it touches is fsynced later (before the crash).
        seen = set()
        for op in reversed(ops[:k]):
            if op.kind == "syncall":
                seen = {"*"}
                continue
            if op.kind == "fsync":
                seen.add(op.nodes[0]); continue
            if "*" in seen or all(n in seen for n in op.nodes):
                done.add(op.i)
        return subsumed(ops, done)
    # ext4 data=ordered: namespace and attribute changes commit in order, one journal transaction after another.
    # fsync(X) writes X's data back (delayed allocation then updates its size in the running transaction) and
    # commits the transaction of X's last change: everything up to the fsync when X changed since its last one,
    # else nothing new.
    dirty = set()
    last_meta_on = {}
    commit_upto = -1
    for op in ops[:k]:
        if op.kind == "syncall":
            commit_upto = op.i
            dirty.clear()
            continue
        if op.kind == "fsync":
            n = op.nodes[0]
            if n in dirty:
                commit_upto = op.i
                dirty.discard(n)
            elif n in last_meta_on:
                commit_upto = max(commit_upto, last_meta_on[n])
            continue
        for n in op.nodes:
            dirty.add(n)
            if op.meta:
                last_meta_on[n] = op.i
    seen = set()
    for op in reversed(ops[:k]):
        if op.kind == "syncall":
            seen = {"*"}; continue
        if op.kind == "fsync":
            seen.add(op.nodes[0]); continue
        if op.meta and op.i <= commit_upto:
            done.add(op.i)
        elif not op.meta and ("*" in seen or op.nodes[0] in seen):
            done.add(op.i)
    return subsumed(ops, done)


def subsumed(ops, done):
    """A durable rmdir makes what it removed durable too: once the folder is gone, so is everything it held."""
    done = set(done)
    stack = [i for i in done if ops[i].inner]
    while stack:
        for j in ops[stack.pop()].inner:
            if j not in done:
                done.add(j)
                if ops[j].inner:
                    stack.append(j)
    return done


def must_go_with(ops, k, u, model, durable):
    """The operations that cannot persist if operation u (among the first k) does not: what depends on it, and
    the later operations not yet durable that persist after it (on the same file or folder; under ext4, every
    later namespace change). A durable operation is never lost: an fsync of one of a rename's folders persisted
    its entry there, whatever became of an earlier change to that folder."""
    gone = {u}
    first = ops[u]
    # (node, is-metadata) streams a lost operation has cut: what follows on them is lost too, transitively.
    def streams(op):
        return op.nodes + ([op.moved] if op.moved is not None else [])

    cut = {(n, first.meta) for n in streams(first)}
    for op in ops[u + 1:k]:
        if op.kind in ("fsync", "syncall"):
            continue
        lost = bool(op.deps & gone)
        if not lost and op.i in durable:
            continue
        if not lost:
            if model == "posix":
                lost = any((n, op.meta) in cut for n in streams(op))
            else:
                lost = (first.meta and op.meta) or (not first.meta and not op.meta and op.nodes == first.nodes)
        if lost:
            gone.add(op.i)
            cut |= {(n, op.meta) for n in streams(op)}
    return gone


def close_deps(ops, kept):
    """Drops every operation whose dependencies are not all kept (repeatedly)."""
    kept = set(kept)
    changed = True
    while changed:
        changed = False
        for i in sorted(kept):
            if ops[i].deps - kept:
                kept.discard(i); changed = True
    return kept


def crash_states(ops, model, rng, per_point_drop):
    """Distinct crash states: (kept op indices, torn op index or None, description)."""
    states = {}
    scores = {}
    n = len(ops)
    syncs_before = [0] * (n + 1)
    for i, op in enumerate(ops):
        syncs_before[i + 1] = syncs_before[i] + (op.kind in ("fsync", "syncall"))
    for k in range(n + 1):
        if k > 0 and ops[k - 1].kind in ("fsync", "syncall"):
            continue
        prefix = [op.i for op in ops[:k] if op.kind not in ("fsync", "syncall")]
        durable = durable_set(ops, k, model)
        cands = []
        cands.append((frozenset(prefix), None, f"crash after #{k - 1}: everything persisted"))
        mn = close_deps(ops, durable)
        cands.append((frozenset(mn), None, f"crash after #{k - 1}: only the durable persisted"))
        volatile = [i for i in prefix if i not in durable]
        if per_point_drop is not None and len(volatile) > per_point_drop:
            volatile = sorted(rng.sample(volatile, per_point_drop))
        for u in volatile:
            gone = must_go_with(ops, k, u, model, durable)
            kept = close_deps(ops, set(prefix) - gone)
            why = f"crash after #{k - 1}: {ops[u]!r} lost" + (f" (and {len(gone) - 1} after it)" if len(gone) > 1 else "")
            # How long u has stayed volatile (fsyncs since it): what a missing fsync leaves so, first in a sample.
            scores[(frozenset(kept), None)] = max(scores.get((frozenset(kept), None), 0), syncs_before[k] - syncs_before[u])
            cands.append((frozenset(kept), None, why))
        # A torn append: the last write of the crash point cut in half, when it is not durable.
        if k > 0 and ops[k - 1].kind == "write" and (k - 1) not in durable and len(ops[k - 1].data) > 1:
            cands.append((frozenset(prefix), k - 1, f"crash during #{k - 1}: {ops[k - 1]!r} torn"))
        for kept, torn, why in cands:
            key = (kept, torn)
            if key not in states:
                states[key] = why
    return [(set(k[0]), k[1], why, scores.get(k, 0)) for k, why in states.items()]


def select(states, budget, rng):
    """At most `budget` states, spread over the run: half of them "only the durable persisted" (the states a
    missing fsync shows in first), a quarter "everything persisted", each evenly spaced over the crash points;
    the rest lost operations, those that stayed volatile across the most fsyncs first."""
    kinds = {"durable": [], "all": [], "other": []}
    for st in states:
        why = st[2]
        kinds["durable" if "only the durable" in why else "all" if "everything persisted" in why else "other"].append(st)

    def spread(xs, n):
        if n >= len(xs):
            return list(xs)
        return [xs[int(i * len(xs) / n)] for i in range(n)]

    quota = {"durable": budget // 2, "all": budget // 4}
    quota["other"] = budget - quota["durable"] - quota["all"]
    chosen = []
    for k in ("durable", "all", "other"):
        xs = kinds[k]
        if k == "other":
            # The operations left volatile across the most fsyncs first: where a missing fsync shows.
            keyed = sorted(xs, key=lambda st: (-st[3], rng.random()))
            chosen += keyed[: quota[k]]
            continue
        chosen += spread(xs, quota[k])
    # Room a kind did not use goes to the others.
    left = [st for st in states if st not in chosen]
    rng.shuffle(left)
    return chosen + left[: budget - len(chosen)]


# ---------------------------------------------------------------------------------------------------------------
# Replay: a state is the starting image with the kept operations made again, in program order.


def replay(ops, kept, torn):
    """Makes the kept operations, in program order. An operation acts on an inode, wherever its name is: when a
    rename was lost, later operations recorded at the new name act at the old one (an xattr set on a file whose
    move into a trash folder was lost is on the file where it still is)."""
    aliases = []  # (new prefix, old prefix) of renames that were lost, latest last

    def where(p):
        if p is None:
            return p
        for new, old in reversed(aliases):
            if p == new or p.startswith(new + "/"):
                p = old + p[len(new):]
        return p

    last = max(kept) if kept else -1
    for i in range(last + 1):
        op = ops[i]
        if i not in kept:
            if op.kind == "rename":
                aliases.append((where(op.path2), where(op.path)))
            continue
        if aliases:
            op = Op(op.kind, **{k: getattr(op, k) for k in Op.__slots__ if k != "kind"})
            op.path, op.path2 = where(op.path), (where(op.path2) if op.kind in ("rename", "link") else op.path2)
        data = op.data
        if torn == i and data is not None:
            data = data[: len(data) // 2]
        k = op.kind
        try:
            if k == "create":
                fd = os.open(op.path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, op.mode)
                os.close(fd)
            elif k == "mkdir":
                os.mkdir(op.path, op.mode)
            elif k == "symlink":
                os.symlink(op.value, op.path)
            elif k == "link":
                os.link(op.path, op.path2, follow_symlinks=False)
            elif k == "unlink":
                os.unlink(op.path)
            elif k == "rmdir":
                os.rmdir(op.path)
            elif k == "rename":
                if "RENAME_EXCHANGE" in (op.flags or ""):
                    raise RuntimeError("RENAME_EXCHANGE not modelled")
                os.rename(op.path, op.path2)
            elif k == "write":
                fd = os.open(op.path, os.O_WRONLY)
                try:
                    off = os.fstat(fd).st_size if op.append else op.offset
                    os.pwrite(fd, data, off)
                finally:
                    os.close(fd)
            elif k == "truncate":
                os.truncate(op.path, op.length)
            elif k == "fallocate":
                fd = os.open(op.path, os.O_WRONLY)
                try:
                    os.posix_fallocate(fd, op.offset, op.length)
                finally:
                    os.close(fd)
            elif k == "setxattr":
                os.setxattr(op.path, op.name, op.value, follow_symlinks=False)
            elif k == "removexattr":
                os.removexattr(op.path, op.name, follow_symlinks=False)
            elif k == "utimes":
                st = os.lstat(op.path)
                a = op.times[0] if op.times and op.times[0] is not None else st.st_atime_ns
                m = op.times[1] if op.times and len(op.times) > 1 and op.times[1] is not None else st.st_mtime_ns
                os.utime(op.path, ns=(a, m), follow_symlinks=False)
            elif k == "chmod":
                os.chmod(op.path, op.mode)
            elif k == "chown":
                os.chown(op.path, op.uid, op.gid, follow_symlinks=False)
        except OSError as e:
            return f"{op!r}: {e}"
    return None


# ---------------------------------------------------------------------------------------------------------------
# The checker.


class Checker:
    def __init__(self, args):
        self.args = args
        self.binary = os.path.abspath(args.binary)
        self.scratch = tempfile.mkdtemp(prefix="policyctl-power-loss-", dir=args.scratch)
        os.chmod(self.scratch, 0o755)
        self.disk = Disk(self.scratch)
        self.policy = os.path.join(self.scratch, "policy.yaml")
        with open(self.policy, "w") as fh:
            fh.write(POLICY)
        self.states = 0
        self.violations = 0
        self.shown = 0
        self.images = {}
        self.rng = random.Random(args.seed)

    def ctx(self, tx=None):
        return {"root": self.disk.root, "policy": self.policy, "binary": self.binary, "tx": tx or ""}

    def violation(self, cmd, model, why, what):
        self.violations += 1
        if self.shown < self.args.show:
            self.shown += 1
            log(f"VIOLATION [{cmd} / {model}] {why}:\n    " + "\n    ".join(what))

    # Starting images ------------------------------------------------------------------------------------------

    def fresh(self):
        """The tree on a fresh filesystem, before anything ran (cached)."""
        if "fresh" in self.images:
            return self.images["fresh"]
        self.disk.mount()
        os.makedirs(self.disk.root)
        build_tree(self.disk.root, self.disk.outside)
        self.disk.umount()
        self.images["fresh"] = self.disk.save("fresh")
        return self.images["fresh"]

    def start_image(self, cmd):
        """Makes the starting image of `cmd`; returns (image, apply's tx when the setup applied)."""
        image = self.fresh()
        tx = None
        steps = cmd["start"]
        key = repr(steps)
        if key in self.images:
            return self.images[key]
        self.disk.load(image)
        self.disk.mount()
        try:
            for step in steps:
                if step[0] == "apply":
                    r = run_binary(self.ctx(), APPLY)
                    if r.returncode != 0:
                        raise RuntimeError(f"setup apply: exit {r.returncode}: {r.stderr.decode()[-300:]}")
                    recs, _ = journal_records(self.disk.root)
                    tx = [x["tx"] for x in recs if x.get("type") == "begin"][-1]
                elif step[0] == "run":
                    r = run_binary(self.ctx(tx), step[1])
                    if r.returncode != 0:
                        raise RuntimeError(f"setup {step[1]}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
                elif step[0] == "crash-apply":
                    self.disk.umount()
                    self.crash_apply_state(step[1])
                    self.disk.mount()
        finally:
            self.disk.umount()
        result = (self.disk.save("start-" + cmd["name"]), tx)
        self.images[key] = result
        return result

    def crash_apply_state(self, where):
        """Loads apply's recorded operations up to a point onto the fresh image: before its commit record (after
        the middle of its changes), or after the commit record and before the purge finished."""
        rec = self.recorded("apply")
        ops = rec["ops"]
        journal = os.path.join(self.disk.root, ".policyctl", "journal.jsonl")
        commit = None
        for op in ops:
            if op.kind == "write" and op.path == journal and b'"type":"commit"' in op.data:
                commit = op.i
        assert commit is not None, "apply's trace holds no commit record"
        if where == "before-commit":
            changes = [op.i for op in ops[:commit] if op.kind in ("rename", "unlink", "mkdir", "setxattr", "create")
                       and "/.policyctl/" not in op.path]
            k = changes[len(changes) * 2 // 3] + 1
        else:
            # The first fsync after the commit record's write: the commit is durable, nothing of the purge is.
            k = next(op.i for op in ops[commit:] if op.kind == "fsync") + 1
        self.disk.load(self.fresh())
        self.disk.mount()
        err = replay(ops, {op.i for op in ops[:k] if op.kind not in ("fsync", "syncall")}, None)
        self.disk.umount()
        if err:
            raise RuntimeError(f"cannot build the crash state: {err}")

    # Recording ------------------------------------------------------------------------------------------------

    def recorded(self, name):
        if name in getattr(self, "_recorded", {}):
            return self._recorded[name]
        self._recorded = getattr(self, "_recorded", {})
        cmd = next(c for c in COMMANDS if c["name"] == name)
        image, tx = self.start_image(cmd)
        # The starting tree's manifest (before), the recorded run's (after), and each one's next apply.
        self.disk.load(image)
        self.disk.mount()
        started = time.time_ns() - 3600 * 10**9
        existing = []
        for dp, dn, fn in os.walk(self.disk.mnt):
            existing += [os.path.join(dp, x) for x in dn + fn]
        before = manifest(self.disk.root, started)
        journal_before, _ = journal_records(self.disk.root)
        trace = os.path.join(self.scratch, f"trace-{name}.txt")
        ctx = self.ctx(tx)
        argv = ["strace", "-f", "-qq", "-y", "-xx", "-s", "1048576", "-o", trace, "-e", "trace=" + TRACED,
                "-e", "signal=none", self.binary] + subst(cmd["run"], ctx)
        e = dict(os.environ, NO_COLOR="1", LC_ALL="C")
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, stdin=subprocess.DEVNULL)
        if r.returncode not in cmd.get("exit", [0]):
            raise RuntimeError(f"recording {name}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-400:]}")
        after = manifest(self.disk.root, started)
        outside = outside_manifest(self.disk.outside)
        self.disk.umount()
        ops = parse_trace(trace, self.disk.mnt, existing)
        result = {"ops": ops, "image": image, "before": before, "after": after, "tx": tx, "started": started,
                  "outside": outside, "history": {x["tx"] for x in journal_before}}
        # Where the tree of `before` and `after` goes with the next apply.
        for which in ("before", "after"):
            self.disk.load(image)
            self.disk.mount()
            if which == "after":
                err = replay(ops, {op.i for op in ops if op.kind not in ("fsync", "syncall")}, None)
                if err:
                    self.disk.umount()
                    raise RuntimeError(f"replaying {name} whole: {err}")
                got = manifest(self.disk.root, started)
                if got != after:
                    self.disk.umount()
                    diff = sorted(set(got) ^ set(after))[:8]
                    raise RuntimeError(f"replaying {name} whole does not give what the run left: {diff}")
            rr = run_binary(self.ctx(tx), APPLY)
            result["next-" + which] = (manifest(self.disk.root, started), rr.returncode)
            self.disk.umount()
        self._recorded[name] = result
        log(f"power-loss: {name}: {len(ops)} operations recorded "
            f"({sum(1 for o in ops if o.kind == 'fsync')} fsyncs)")
        return result

    # Checking -------------------------------------------------------------------------------------------------

    def check_command(self, cmd, model, budget):
        rec = self.recorded(cmd["name"])
        if "reference" in cmd:
            ref = self.recorded(cmd["reference"])
            before, after, nb, na = ref["before"], ref["after"], ref["next-before"], ref["next-after"]
            history = ref["history"]
        else:
            before, after, nb, na = rec["before"], rec["after"], rec["next-before"], rec["next-after"]
            history = rec["history"]
        ops = rec["ops"]
        states = crash_states(ops, model, self.rng, self.args.drops)
        if budget is not None and len(states) > budget:
            states = select(states, budget, self.rng)
        log(f"power-loss: {cmd['name']} / {model}: {len(states)} crash states")
        for kept, torn, why, _ in states:
            self.check_state(cmd, model, rec, ops, kept, torn, why, before, after, nb, na, history)

    def check_state(self, cmd, model, rec, ops, kept, torn, why, before, after, nb, na, history):
        self.states += 1
        self.disk.load(rec["image"])
        self.disk.mount()
        try:
            problems = []
            err = replay(ops, kept, torn)
            if err:
                # A state the model allows but the replay cannot make: a checker limit, not the binary's fault.
                log(f"power-loss: note: [{cmd['name']} / {model}] {why}: cannot replay ({err}); skipped")
                self.states -= 1
                return
            ctx = self.ctx(rec["tx"])
            r = run_binary(ctx, ["recover", "--root", "ROOT"])
            if r.returncode != 0:
                problems.append(f"recover exit {r.returncode}: {r.stderr.decode(errors='replace').strip()[-300:]}")
            recs, bad = journal_records(self.disk.root)
            if bad:
                problems.append(f"journal unreadable after recover: lines {bad}")
            begun = [x["tx"] for x in recs if x.get("type") == "begin"]
            ended = {x["tx"] for x in recs if x.get("type") == "end"}
            open_tx = [t for t in begun if t not in ended]
            if open_tx:
                problems.append(f"transactions left open by recover: {open_tx}")
            ours = [t for t in begun if t not in history]
            if "reference" in cmd:
                ours = [t for t in begun if t not in self.recorded(cmd["reference"])["history"]]
            committed = any(x.get("type") == "commit" and x["tx"] in ours for x in recs)
            got = manifest(self.disk.root, rec["started"])
            if committed:
                expected, label = after, "after"
            else:
                finished = set()
                for t in ours:
                    finished |= rolled_forward(recs, t)
                expected = [l for l in before if l.split(" ")[0] not in finished]
                label = "before" + (f" (with {len(finished)} roll-forward deletes)" if finished else "")
            if got != expected:
                missing = sorted(set(expected) - set(got))[:6]
                extra = sorted(set(got) - set(expected))[:6]
                problems.append(f"the tree is not exactly {label}: missing {missing}, unexpected {extra}")
            if outside_manifest(self.disk.outside) != rec["outside"] and \
                    outside_manifest(self.disk.outside).split(" ")[:2] != rec["outside"].split(" ")[:2]:
                problems.append("the file outside the root changed")
            staging = os.path.join(self.disk.root, ".policyctl", "staging")
            left = os.listdir(staging) if os.path.isdir(staging) else []
            if left and not any(x.get("type") == "kept" for x in recs):
                problems.append(f"staging not empty after recover: {left}")
            # The next apply reaches what it reaches from the clean state.
            r2 = run_binary(ctx, APPLY)
            ref_next = na if committed else nb
            got2 = manifest(self.disk.root, rec["started"])
            if r2.returncode != ref_next[1]:
                problems.append(f"next apply exit {r2.returncode}, not {ref_next[1]}: "
                                f"{r2.stderr.decode(errors='replace').strip()[-300:]}")
            elif got2 != ref_next[0]:
                missing = sorted(set(ref_next[0]) - set(got2))[:6]
                extra = sorted(set(got2) - set(ref_next[0]))[:6]
                problems.append(f"the next apply does not reach the clean result: missing {missing}, unexpected {extra}")
            if problems:
                lost = [repr(ops[i]) for i in range(len(ops)) if ops[i].kind not in ("fsync", "syncall")
                        and i not in kept and i < max(kept | {0}) ][:6]
                self.violation(cmd["name"], model, why, problems + ([f"not persisted: {lost}"] if lost else []))
        finally:
            self.disk.umount()

    def run(self):
        names = [c["name"] for c in COMMANDS]
        only = self.args.only or names
        budget = self.args.budget
        for model in self.args.models:
            for cmd in COMMANDS:
                if cmd["name"] in only:
                    self.check_command(cmd, model, budget)

    def close(self):
        if self.args.keep:
            keep = self.scratch + ".kept"
            shutil.copytree(self.scratch, keep, ignore=shutil.ignore_patterns("m"))
            log(f"power-loss: kept {keep}")
        self.disk.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------------
# The self-test: mutants of the fsync sites, built from a scratch copy of the sources, each of which the checker
# must report. Found by pattern (the function they sit in), never by line number.

SYNC_CALL = re.compile(r"try\??\s+(?:[\w.]+(?:\([^()]*\))?\??\.)*(?:sync|syncDirectories|flush)\(\)")


def function_of(lines, i):
    for j in range(i, -1, -1):
        m = re.search(r"\bfunc\s+(\w+)", lines[j])
        if m:
            return m.group(1)
    return "?"


def sync_sites(src):
    """Every fsync site of the engine's journal and apply code: (file, line index, function, text)."""
    out = []
    d = os.path.join(src, "Sources", "StoragePolicyApply")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".swift"):
            continue
        lines = open(os.path.join(d, name)).read().split("\n")
        for i, l in enumerate(lines):
            if l.lstrip().startswith("//"):
                continue
            for m in SYNC_CALL.finditer(l):
                out.append((os.path.join("Sources", "StoragePolicyApply", name), i, function_of(lines, i), m.group(0)))
    return out


# The three seeded bugs of issue 51, by the function they sit in and the call they drop.
NAMED_MUTANTS = {
    # The folder fsyncs before the commit record.
    "no-folder-syncs-before-commit": ("Transaction.swift", "commit", "syncDirectories()"),
    # The journal's group fsync (the first in writeBuffer; the second is the retry after ENOSPC).
    "no-journal-group-fsync": ("Journal.swift", "writeBuffer", "file.sync()"),
    # A file's fsync: the temporary of a `.trashinfo`, a cache tag or a layout file, before its rename.
    "no-file-fsync-before-rename": ("Transaction.swift", "writeFile", "file.sync()"),
}


def self_test(args):
    scratch = os.environ.get("POWER_LOSS_SELFTEST", "/tmp/policyctl-power-loss-selftest")
    src = os.path.join(scratch, "src")
    os.makedirs(src, exist_ok=True)
    subprocess.run(f"tar --exclude=./.build --exclude=./.git -cf - . | tar -C {src} -xf -", shell=True, cwd=REPO,
                   check=True)
    sites = sync_sites(src)
    mutants = []
    for name, (fname, func, call) in NAMED_MUTANTS.items():
        hits = [s for s in sites if s[0].endswith("/" + fname) and s[2] == func and call in s[3]]
        if not hits:
            print(f"BROKEN    {name}: no `{call}` in {fname}'s {func} (update NAMED_MUTANTS)")
            return 2
        mutants.append((name, hits[0]))
    if args.self_test == "all":
        named = {m[1] for m in mutants}
        mutants += [(f"{os.path.basename(s[0])}:{s[2]}:{s[1] + 1}", s) for s in sites if s not in named]
    if args.site_filter:
        mutants = [m for m in mutants if re.search(args.site_filter, f"{m[0]} {m[1][0]} {m[1][2]} {m[1][3]}")]
    env = dict(os.environ, PATH="/opt/swift/usr/bin:" + os.environ.get("PATH", ""))
    caught = survived = 0
    for name, (fname, i, func, text) in mutants:
        path = os.path.join(src, fname)
        original = open(os.path.join(REPO, fname)).read()
        lines = original.split("\n")
        assert lines[i].count(text) == 1, (fname, i, text)
        # `if false { ... }` keeps the call's `try` (a `do`/`catch` around it still type-checks) and never runs it.
        lines[i] = lines[i].replace(text, "if false { " + text + " }  /* power-loss mutant */")
        open(path, "w").write("\n".join(lines))
        try:
            b = subprocess.run(["swift", "build", "--product", "policyctl"], cwd=src, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if b.returncode != 0:
                print(f"BROKEN    {name}: does not build: {b.stdout.decode(errors='replace')[-600:]}")
                survived += 1
                continue
            binary = os.path.join(src, ".build", "debug", "policyctl")
            cmd = [sys.executable, os.path.abspath(__file__), "--binary", binary, "--show", "1"] + args.mutant_args
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            last = r.stdout.decode().strip().split("\n")[-1]
            m = re.match(r"power-loss: (\d+) crash states, (\d+) violations", last)
            if m and int(m.group(2)) > 0:
                caught += 1
                first = next((l for l in r.stderr.decode().split("\n") if l.startswith("VIOLATION")), "")
                print(f"caught    {name} ({func}: {text}): {last}\n          {first[:220]}")
            else:
                survived += 1
                print(f"SURVIVED  {name} ({func}: {text}): {last}")
        finally:
            open(path, "w").write(original)
        sys.stdout.flush()
    print(f"power-loss self-test: {caught} caught, {survived} survived")
    return 0 if survived == 0 else 1


# ---------------------------------------------------------------------------------------------------------------
# The filesystem matrix's check of a tree that was already there (overlayfs: the tree in the lower layer).


def timeless(lines):
    """A manifest without the starting tree's mtimes (two trees built at different times)."""
    return [re.sub(r" size=\d+$", "", re.sub(r" mtime=\d+", " mtime=old", l)) if ".trashinfo " in l else
            re.sub(r" mtime=\d+", " mtime=old", l) for l in lines]


def tree_check(args):
    """`--tree-check ROOT`: builds the tree in ROOT unless `--tree-present` (the overlay's lower holds it), applies
    the policy, and compares the result with the same apply on a tree built in a fresh folder beside the script's
    scratch (the reference); then a second apply must change nothing. Prints one line, exit 1 on a difference."""
    root = args.tree_check
    outside = os.path.join(os.path.dirname(root), "outside")
    policy = os.path.join(args.scratch, f"policyctl-tree-check-{os.getpid()}.yaml")
    with open(policy, "w") as fh:
        fh.write(POLICY)
    ref_base = tempfile.mkdtemp(prefix="policyctl-tree-check-", dir=args.scratch)
    try:
        if not args.tree_present:
            os.makedirs(root)
            build_tree(root, outside)
        ref_root = os.path.join(ref_base, "root")
        os.makedirs(ref_root)
        build_tree(ref_root, os.path.join(ref_base, "outside"))
        started = time.time_ns() - 3600 * 10**9
        before = timeless(manifest(root, started))
        if before != timeless(manifest(ref_root, started)):
            print(f"tree-check: {root}: the starting tree differs from the reference: "
                  f"{sorted(set(before) ^ set(timeless(manifest(ref_root, started))))[:6]}")
            return 1
        results = []
        for r in (root, ref_root):
            ctx = {"root": r, "policy": policy, "binary": os.path.abspath(args.binary)}
            run = run_binary(ctx, APPLY)
            again = run_binary(ctx, APPLY)
            recs, bad = journal_records(r)
            results.append((run.returncode, timeless(manifest(r, started)), again.returncode, again.stdout.decode(errors="replace"),
                            bad, sorted(x.get("outcome", "") for x in recs if x.get("type") == "end"),
                            run.stderr.decode(errors="replace")[-300:]))
        got, ref = results
        problems = []
        if got[0] != ref[0]:
            problems.append(f"apply exit {got[0]}, reference {ref[0]}: {got[6]}")
        if got[1] != ref[1]:
            problems.append(f"tree differs from the reference: missing {sorted(set(ref[1]) - set(got[1]))[:6]}, "
                            f"unexpected {sorted(set(got[1]) - set(ref[1]))[:6]}")
        if got[2] != 0 or "Nothing to do" not in got[3] and "nothing to do" not in got[3].lower():
            problems.append(f"a second apply was not a no-op (exit {got[2]}): {got[3][-300:]}")
        if got[4] or got[5] != ref[5]:
            problems.append(f"journal: bad lines {got[4]}, outcomes {got[5]} (reference {ref[5]})")
        for p in problems:
            print(f"tree-check: {root}: {p}")
        print(f"tree-check: {root}: {'ok' if not problems else 'FAILED'} ({len(got[1])} entries after apply)")
        return 1 if problems else 0
    finally:
        shutil.rmtree(ref_base, ignore_errors=True)
        os.unlink(policy)


def default_binary():
    for p in (os.environ.get("POLICYCTL"), os.path.join(REPO, ".build/debug/policyctl"),
              os.path.join(REPO, ".build/release/policyctl")):
        if p and os.path.exists(p):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=default_binary())
    ap.add_argument("--short", action="store_true", help="a few hundred states (the suite's run)")
    ap.add_argument("--only", action="append", help="only this command (repeatable)")
    ap.add_argument("--models", default="ext4,posix")
    ap.add_argument("--budget", type=int, default=None, help="at most this many states per command and model")
    ap.add_argument("--drops", type=int, default=None, help="at most this many lost-operation states per crash point")
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--show", type=int, default=10, help="violations shown in full")
    ap.add_argument("--scratch", default=os.environ.get("POWER_LOSS_SCRATCH", "/tmp"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--list", action="store_true", help="list the commands and exit")
    ap.add_argument("--self-test", nargs="?", const="named", choices=["named", "all"],
                    help="build mutants of the fsync sites (the three seeded bugs, or every site) and expect violations")
    ap.add_argument("--sites", action="store_true", help="list the fsync sites the self-test mutates")
    ap.add_argument("--site-filter", metavar="REGEX", help="with --self-test: only the mutants whose name, file, "
                    "function or call match")
    ap.add_argument("--tree-check", metavar="ROOT", help="apply the checker's tree and policy at ROOT, compare with a reference")
    ap.add_argument("--tree-present", action="store_true", help="with --tree-check: ROOT already holds the tree")
    args, rest = ap.parse_known_args()
    args.mutant_args = rest or ["--short"]
    if args.sites:
        for s in sync_sites(REPO):
            print(f"{s[0]}:{s[1] + 1} {s[2]}: {s[3]}")
        return 0
    if args.self_test:
        return self_test(args)
    if args.tree_check:
        return tree_check(args)
    args.models = args.models.split(",")
    if args.list:
        for c in COMMANDS:
            print(c["name"], " ".join(c["run"]))
        return 0
    if args.short:
        args.budget = args.budget or 22
    missing = [t for t in ("strace", "mkfs.ext4", "losetup", "mount") if shutil.which(t) is None]
    if missing or os.geteuid() != 0 or not args.binary:
        why = f"missing {missing}" if missing else ("not root" if os.geteuid() != 0 else "no policyctl binary")
        print(f"power-loss: cannot run: {why}")
        return 2
    checker = Checker(args)
    try:
        checker.run()
    finally:
        checker.close()
    print(f"power-loss: {checker.states} crash states, {checker.violations} violations")
    return 1 if checker.violations else 0


if __name__ == "__main__":
    sys.exit(main())
