#!/usr/bin/env python3
# Generates a realistic app-container tree (the DOMAIN.md layout) of about N entries for benchmarks, with
# ages spread around every threshold of Benchmarks/bench-policy.yaml. Writes only under the given folder.
"""Usage: generate-tree.py ROOT N [--hostile] [--seed S]

ROOT must not exist yet. N is the approximate number of entries (files, directories, symlinks).
--hostile adds names with invalid UTF-8, newlines, spaces and leading dashes, and symlinks that point
outside the tree and back into it.
"""
import argparse
import os
import random
import sys
import time

HOUR = 3600
DAY = 86400

# Share of the entries each place gets, and the age thresholds its rules use (seconds).
PLACES = [
    # path, share, kind, threshold
    ("tmp", 0.20, "tmp", 1 * DAY),
    ("Documents/UserFiles", 0.32, "user", 1 * HOUR),
    ("Documents/UserFiles/.Trash", 0.03, "trash", 30 * DAY),
    ("Documents/ExportTemp", 0.03, "export", 7 * DAY),
    ("Library/Application Support/AppData", 0.10, "appdata", 0),
    ("Library/Caches/Thumbnails", 0.25, "thumbs", 0),
    ("Library/Caches/Downloading", 0.07, "partial", 14 * DAY),
]

USER_EXTENSIONS = [".txt", ".md", ".pdf", ".jpg", ".heic", ".docx", ".txt", ".md"]


class Generator:
    def __init__(self, root, total, hostile, seed):
        self.root = root
        self.total = total
        self.hostile = hostile
        self.random = random.Random(seed)
        self.now = time.time()
        self.count = 0
        self.outside = None

    def age(self, threshold, spread=1.0):
        """An age spread evenly around a threshold: half younger, half older (within +/- spread*threshold)."""
        if threshold == 0:
            return self.random.uniform(0, 60 * DAY)
        return max(1.0, threshold * (1 + self.random.uniform(-spread, spread)))

    def stamp(self, path, age, atime_age=None):
        t = self.now - age
        a = self.now - (atime_age if atime_age is not None else age)
        os.utime(path, ns=(int(a * 1e9), int(t * 1e9)), follow_symlinks=False)

    def file(self, path, age, size=0, atime_age=None):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        if size:
            os.write(fd, b"x" * size)
        os.close(fd)
        self.stamp(path, age, atime_age)
        self.count += 1

    def directory(self, path):
        os.makedirs(path, exist_ok=True)

    def name(self, base, ext):
        """A plain name, or now and then (with --hostile) one no tool should choke on."""
        n = base + ext
        if self.hostile and self.random.random() < 0.02:
            kind = self.random.randrange(4)
            if kind == 0:
                return os.fsencode(base) + b"\xff\xfe" + os.fsencode(ext)
            if kind == 1:
                return base + "\nline" + ext
            if kind == 2:
                return "-" + base + " with spaces" + ext
            return "\u00e9t\u00e9 " + base + ext
        return n

    def place(self, relative, share, kind, threshold):
        quota = max(1, int(self.total * share))
        base = os.path.join(self.root, relative)
        self.directory(base)
        made = 0
        folder_index = 0
        while made < quota:
            # Folders of 20 to 60 entries, one to four levels below the place.
            depth = self.random.randint(1, 4)
            parts = [f"{kind}-{folder_index}-{d}" for d in range(depth)]
            if kind == "trash":
                parts = parts[:1]
            folder = os.path.join(base, *parts)
            self.directory(folder)
            self.count += depth
            made += depth
            folder_index += 1
            for i in range(self.random.randint(20, 60)):
                if made >= quota:
                    break
                made += 1
                self.entry(folder, kind, threshold, i)
            # Directory times around the threshold too, so some emptied directories are expired themselves.
            for d in range(depth, 0, -1):
                self.stamp(os.path.join(base, *parts[:d]), self.age(threshold or DAY))

    def entry(self, folder, kind, threshold, i):
        r = self.random.random()
        if kind == "tmp":
            name = self.name(f"scratch-{i}", ".dat" if r < 0.8 else ".upload")
            self.file(os.path.join(os.fsencode(folder), os.fsencode(name)) if isinstance(name, bytes) else os.path.join(folder, name),
                      self.age(threshold), size=0)
        elif kind == "user":
            ext = self.random.choice(USER_EXTENSIONS)
            base = f"Note-{i}" if r < 0.15 else f"note_{i}"
            if r > 0.97:
                ext = ".tmp"  # residue of a dead download
            elif r > 0.96:
                ext = ".sqlite"  # a private database where it does not belong
            name = self.name(base, ext)
            path = os.path.join(os.fsencode(folder), name) if isinstance(name, bytes) else os.path.join(folder, name)
            self.file(path, self.age(HOUR if ext == ".tmp" else 30 * DAY), size=0)
        elif kind == "trash":
            path = os.path.join(folder, f"trashed-{i}.txt")
            self.file(path, self.age(90 * DAY))
            trashed = self.now - self.age(threshold)
            if r < 0.9:
                os.setxattr(path, "user.policyctl.trashed", str(int(trashed)).encode(), follow_symlinks=False)
        elif kind == "export":
            self.file(os.path.join(folder, f"export-{i}.zip"), self.age(threshold))
        elif kind == "appdata":
            self.file(os.path.join(folder, f"record-{i}.db"), self.age(0), size=0)
        elif kind == "thumbs":
            self.file(os.path.join(folder, f"thumb-{i}.jpg"), self.age(0), size=self.random.randint(200, 3000),
                      atime_age=self.age(0))
        elif kind == "partial":
            self.file(os.path.join(folder, f"video-{i}.part"), self.age(threshold), size=0)
        if self.hostile and r < 0.01:
            target = self.outside if r < 0.005 else "."
            link = os.path.join(folder, f"link-{i}")
            os.symlink(target, link)
            self.count += 1

    def run(self):
        os.makedirs(self.root)
        if self.hostile:
            self.outside = self.root + ".outside"
            os.makedirs(os.path.join(self.outside, "victim"), exist_ok=True)
        for relative, share, kind, threshold in PLACES:
            self.place(relative, share, kind, threshold)
        # The engine's own state folder: never scanned.
        os.makedirs(os.path.join(self.root, ".policyctl"), exist_ok=True)
        return self.count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("entries", type=int)
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if os.path.exists(args.root):
        sys.exit(f"{args.root} exists; choose a new folder")
    count = Generator(args.root, args.entries, args.hostile, args.seed).run()
    print(f"{args.root}: {count} entries")


if __name__ == "__main__":
    main()
