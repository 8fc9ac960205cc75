#!/usr/bin/env python3
# Benchmark trees shaped like the places policyctl really cleans (issue 31), beside generate-tree.py's even
# 20-to-60-entry folders: deletes spread over hundreds of folders of 10 to 500 entries, so apply keeps moving
# from folder to folder, and long container paths. Writes only ROOT.
"""Usage: generate-shapes.py SHAPE ROOT N [--seed S]

SHAPE is one of:
  container  an app container: Documents/UserFiles (with Download/ and Import/), its .Trash, ExportTemp,
             Library/Caches (Thumbnails, Downloading), Library/Application Support, tmp; every rule kind of
             Benchmarks/container-policy.yaml has work (at 1,000,000 entries about 190,000 actions: deletes
             spread over thousands of folders, about 5,000 renames to lowercase, moves to the trash)
  host       a Linux host: a shared tmp/ with per-user and per-service subfolders (systemd-private-*,
             user-UID/, build and cache folders) and a FreeDesktop trash home/alice/.local/share/Trash whose
             items include directories with contents (Benchmarks/host-policy.yaml)
  flat       one folder, tmp/, of N empty files, every other one expired (bench-apply.sh's FLAT=1 tree)
ROOT must not exist yet. N is the approximate number of entries.
"""
import argparse
import math
import os
import random
import sys
import time

HOUR = 3600
DAY = 86400


class Shape:
    def __init__(self, root, total, seed):
        self.root = root
        self.total = total
        self.random = random.Random(seed)
        self.now = time.time()
        self.count = 0

    def age(self, threshold, spread=1.0):
        """An age spread evenly around a threshold: half younger, half older."""
        return max(1.0, threshold * (1 + self.random.uniform(-spread, spread)))

    def stamp(self, path, age, atime_age=None):
        m = self.now - age
        a = self.now - (atime_age if atime_age is not None else age)
        os.utime(path, ns=(int(a * 1e9), int(m * 1e9)), follow_symlinks=False)

    def file(self, path, age, size=0, atime_age=None):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        if size:
            os.write(fd, b"x" * size)
        os.close(fd)
        self.stamp(path, age, atime_age)
        self.count += 1

    def folder_size(self, low=10, high=500):
        """10 to 500 entries, most of them small (log-uniform), as folders are."""
        return int(math.exp(self.random.uniform(math.log(low), math.log(high))))

    def folders(self, base, quota, prefix, make_entry, depth=(1, 3), low=10, high=500, young_dirs=True):
        """Fills `quota` entries into folders of `low` to `high` entries, one to three levels below `base`.
        Directories are stamped an hour old (young_dirs) so an emptied one is not expired itself: both tools
        then delete exactly the same files."""
        os.makedirs(base, exist_ok=True)
        made, index = 0, 0
        while made < quota:
            parts = [f"{prefix}-{index}-{d}" for d in range(self.random.randint(*depth))]
            folder = os.path.join(base, *parts)
            os.makedirs(folder, exist_ok=True)
            self.count += len(parts)
            made += len(parts)
            for i in range(min(self.folder_size(low, high), quota - made)):
                make_entry(folder, i)
                made += 1
            for d in range(len(parts), 0, -1):
                self.stamp(os.path.join(base, *parts[:d]), HOUR if young_dirs else self.age(DAY))
            index += 1


class Container(Shape):
    # Share of the entries per place; the thumbnail cache stays at about 1.2x its 160 MiB quota at any size
    # (a cache that is looked after), the other places grow instead.
    PLACES = [
        ("tmp", 0.18),
        ("Documents/UserFiles", 0.17),
        ("Documents/UserFiles/Download", 0.07),
        ("Documents/UserFiles/Import", 0.05),
        ("Documents/UserFiles/.Trash", 0.04),
        ("Documents/ExportTemp", 0.04),
        ("Library/Application Support/AppData", 0.20),
        ("Library/Caches/Thumbnails", 0.20),
        ("Library/Caches/Downloading", 0.05),
    ]
    THUMBNAILS = 50_000

    def run(self):
        os.makedirs(self.root)
        counts = {place: int(self.total * share) for place, share in self.PLACES}
        spare = max(0, counts["Library/Caches/Thumbnails"] - self.THUMBNAILS)
        counts["Library/Caches/Thumbnails"] -= spare
        others = sum(share for place, share in self.PLACES if place != "Library/Caches/Thumbnails")
        for place, share in self.PLACES:
            if place != "Library/Caches/Thumbnails":
                counts[place] += int(spare * share / others)
        r = self.random
        path = lambda place: os.path.join(self.root, place)

        def scratch(folder, i):  # tmp: 24 h expiry by newest, ages 0 to 48 h
            self.file(os.path.join(folder, f"scratch-{i}.{'dat' if r.random() < 0.8 else 'upload'}"), self.age(DAY))

        def user(folder, i):  # lowercase .txt/.md (8 % named with capitals), 1 % .sqlite (forbidden)
            x = r.random()
            ext = r.choice([".txt", ".md", ".pdf", ".jpg", ".heic", ".docx"])
            name = f"Note-{i}" if x < 0.08 else f"note_{i}"
            if x > 0.99:
                ext = ".sqlite"
            self.file(os.path.join(folder, name + ext), self.age(30 * DAY))

        def download(folder, i):  # Download/: half residue (.download, .tmp) around 1 h
            if r.random() < 0.5:
                self.file(os.path.join(folder, f"get-{i}.{r.choice(['download', 'tmp'])}"), self.age(HOUR))
            else:
                self.file(os.path.join(folder, f"file_{i}.pdf"), self.age(30 * DAY))

        def imported(folder, i):  # Import/: photos, a few .tmp residues
            ext = ".tmp" if r.random() < 0.1 else ".jpg"
            self.file(os.path.join(folder, f"img_{i}{ext}"), self.age(HOUR if ext == ".tmp" else 30 * DAY))

        def trashed(folder, i):  # app trash: stamped around 30 days ago (10 % unstamped)
            p = os.path.join(folder, f"trashed-{i}.txt")
            self.file(p, self.age(90 * DAY))
            if r.random() < 0.9:
                os.setxattr(p, "user.policyctl.trashed", str(int(self.now - self.age(30 * DAY))).encode(),
                            follow_symlinks=False)

        self.folders(path("tmp"), counts["tmp"], "t", scratch)
        self.folders(path("Documents/UserFiles"), counts["Documents/UserFiles"], "u", user)
        self.folders(path("Documents/UserFiles/Download"), counts["Documents/UserFiles/Download"], "d", download)
        self.folders(path("Documents/UserFiles/Import"), counts["Documents/UserFiles/Import"], "i", imported)
        self.folders(path("Documents/UserFiles/.Trash"), counts["Documents/UserFiles/.Trash"], "x", trashed, depth=(1, 1))
        self.folders(path("Documents/ExportTemp"), counts["Documents/ExportTemp"], "e",
                     lambda f, i: self.file(os.path.join(f, f"export-{i}.zip"), self.age(7 * DAY)))
        self.folders(path("Library/Application Support/AppData"), counts["Library/Application Support/AppData"], "a",
                     lambda f, i: self.file(os.path.join(f, f"record-{i}.db"), self.age(30 * DAY)))
        self.folders(path("Library/Caches/Thumbnails"), counts["Library/Caches/Thumbnails"], "th",
                     lambda f, i: self.file(os.path.join(f, f"thumb-{i}.jpg"), self.age(30 * DAY),
                                            size=r.randint(200, 3000), atime_age=self.age(30 * DAY)))
        self.folders(path("Library/Caches/Downloading"), counts["Library/Caches/Downloading"], "p",
                     lambda f, i: self.file(os.path.join(f, f"video-{i}.part"), self.age(14 * DAY)))
        os.makedirs(os.path.join(self.root, ".policyctl"), exist_ok=True)
        return self.count


class Host(Shape):
    def run(self):
        os.makedirs(self.root)
        r = self.random
        tmp = os.path.join(self.root, "tmp")
        trash = os.path.join(self.root, "home/alice/.local/share/Trash")
        trash_share = 0.1
        tmp_quota = int(self.total * (1 - trash_share))
        # tmp/: per-user and per-service subfolders, each a tree of folders of 10 to 500 files, 10-day ages.
        owners = [f"user-{1000 + u}" for u in range(8)] + [f"systemd-private-{u:08x}-colord.service-x" for u in range(4)] \
            + ["pip-build-env", "go-build", ".X11-unix", "dotnet-cache"]
        per_owner = tmp_quota // len(owners)
        for owner in owners:
            self.folders(os.path.join(tmp, owner), per_owner, "s",
                         lambda f, i: self.file(os.path.join(f, f"f{i}.{r.choice(['o', 'tmp', 'log', 'sock'])}"),
                                                self.age(10 * DAY)), depth=(1, 2))
            self.stamp(os.path.join(tmp, owner), HOUR)
        self.stamp(tmp, HOUR)
        # The trash: files/NAME (a third are directories of 5 to 60 files) with info/NAME.trashinfo dated
        # around 30 days ago.
        files, info = os.path.join(trash, "files"), os.path.join(trash, "info")
        os.makedirs(files)
        os.makedirs(info)
        made, n = 0, 0
        while made < self.total * trash_share:
            name = f"item-{n}"
            item = os.path.join(files, name)
            if r.random() < 0.33:
                os.mkdir(item)
                inner = r.randint(5, 60)
                for i in range(inner):
                    self.file(os.path.join(item, f"part-{i}.txt"), self.age(60 * DAY))
                self.stamp(item, self.age(60 * DAY))
                self.count += 1
                made += inner + 2
            else:
                self.file(item, self.age(60 * DAY), size=r.randint(0, 2000))
                made += 2
            deleted = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.now - self.age(30 * DAY)))
            with open(os.path.join(info, name + ".trashinfo"), "w") as f:
                f.write(f"[Trash Info]\nPath=/home/alice/{name}\nDeletionDate={deleted}\n")
            self.count += 1
            n += 1
        os.makedirs(os.path.join(self.root, ".policyctl"), exist_ok=True)
        return self.count


class Flat(Shape):
    def run(self):
        os.makedirs(os.path.join(self.root, "tmp"))
        for i in range(self.total):
            self.file(os.path.join(self.root, "tmp", f"f{i:06d}.dat"), 48 * HOUR if i % 2 == 0 else HOUR)
        self.stamp(os.path.join(self.root, "tmp"), HOUR)
        return self.count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=["container", "host", "flat"])
    parser.add_argument("root")
    parser.add_argument("entries", type=int)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    if os.path.exists(args.root):
        sys.exit(f"{args.root} exists; choose a new folder")
    shape = {"container": Container, "host": Host, "flat": Flat}[args.shape]
    count = shape(args.root, args.entries, args.seed).run()
    print(f"{args.root}: {count} entries ({args.shape})")


if __name__ == "__main__":
    main()
