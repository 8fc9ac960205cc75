// Folder times against a co-tenant (uid 12345, via setpriv), with the built binary run as root: apply puts a
// folder's atime and mtime back after removing entries from it, on the folder's own descriptor reached with
// O_NOFOLLOW from the root. A folder the co-tenant swaps for a symlink out of the root, or for another directory,
// between plan and apply or while apply and recovery run, never gets times set through the swap: nothing
// outside the root changes (its times to the nanosecond, its ctimes, names, link counts and contents).
import TreeFixture
import Foundation
import Testing

@Suite("folder times against a co-tenant's swaps (binary, attacker uid 12345)", .serialized)
struct CoTenantDirectoryTimesTests {
    static let policyText = "version: 1\nname: times\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 7d\n"
    static let day: Int64 = 86_400 * 1_000_000_000

    /// Every time below is a whole second plus distinct nanoseconds, so an exact match is no accident.
    static func at(daysAgo: Int64, plusNs: Int64) -> Int64 { treeEpoch * 1_000_000_000 - daysAgo * day + plusNs }

    /// One entry's lstat: what must not change outside the root.
    struct Stamp: Equatable, CustomStringConvertible {
        var inode: UInt64
        var links: UInt64
        var size: Int64
        var mode: UInt32
        var uid: UInt32
        var accessNs: Int64
        var modificationNs: Int64
        var changeNs: Int64
        var description: String { "ino \(inode) nlink \(links) size \(size) mode \(String(mode, radix: 8)) uid \(uid) atime \(accessNs) mtime \(modificationNs) ctime \(changeNs)" }

        /// Never reads a folder (no readdir): under relatime that would move the atime this suite compares.
        init?(_ path: String) {
            var s = stat()
            guard lstat(path, &s) == 0 else { return nil }
            inode = UInt64(s.st_ino); links = UInt64(s.st_nlink); size = Int64(s.st_size); mode = UInt32(s.st_mode)
            uid = UInt32(s.st_uid)
            accessNs = Int64(s.st_atim.tv_sec) * 1_000_000_000 + Int64(s.st_atim.tv_nsec)
            modificationNs = Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
            changeNs = Int64(s.st_ctim.tv_sec) * 1_000_000_000 + Int64(s.st_ctim.tv_nsec)
        }
    }

    /// Linux's O_NOATIME (asm-generic fcntl.h: 01000000); the Glibc module does not export it.
    static let noAccessTime: Int32 = 0o1000000

    /// A folder's names, read through an O_NOATIME descriptor (root may use it on any file): no atime moves.
    static func quietNames(_ path: String) -> [String]? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | noAccessTime)
        guard fd >= 0 else { return nil }
        guard let dir = fdopendir(fd) else { close(fd); return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A small file's contents, read through an O_NOATIME descriptor.
    static func quietRead(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | noAccessTime)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    static func setTimes(_ path: String, accessNs: Int64, modificationNs: Int64) {
        var times = [timespec(tv_sec: Int(accessNs / 1_000_000_000), tv_nsec: Int(accessNs % 1_000_000_000)),
                     timespec(tv_sec: Int(modificationNs / 1_000_000_000), tv_nsec: Int(modificationNs % 1_000_000_000))]
        let done = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
        precondition(done == 0, "utimensat \(path): errno \(errno)")
    }

    /// A root-owned root holding `tmp` (1777, like /tmp); in it the co-tenant's own folder `d` with `count` old
    /// files and a fresh one (so `d` stays), and, with `control`, the co-tenant's `e` (one old file, one fresh)
    /// that nobody swaps. Outside the root, a root-owned folder holding a hard link of every old file of `d`
    /// (the sharpest bait: an entry followed through a swap would match the plan's identity exactly) and a
    /// plain 0600 file. Every time is set to a known value; the plan is saved.
    final class World {
        let scratch = ScratchDirectory("cotimes")
        let root: String
        let tmp: String
        let outside: String
        let policy: String
        let planFile: String
        let names: [String]
        let control: Bool
        /// `d`'s and `e`'s times as made (atime, mtime): distinct, old, atime after mtime.
        let dTimes = (accessNs: at(daysAgo: 9, plusNs: 111_111_111), modificationNs: at(daysAgo: 10, plusNs: 222_222_222))
        let eTimes = (accessNs: at(daysAgo: 8, plusNs: 555_555_555), modificationNs: at(daysAgo: 11, plusNs: 666_666_666))
        /// The outside folder's times: a readdir (relatime) or a utimensat would change them.
        let outsideTimes = (accessNs: at(daysAgo: 20, plusNs: 333_333_333), modificationNs: at(daysAgo: 30, plusNs: 444_444_444))

        init(count: Int, control: Bool = true) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            tmp = root + "/tmp"
            mkdir(tmp, 0o755)
            chmod(tmp, 0o1777)
            outside = scratch.sub("outside")
            policy = scratch.path + "/policy.yaml"
            planFile = scratch.path + "/plan.json"
            try writePolicy(policy, CoTenantDirectoryTimesTests.policyText)
            names = (1...count).map { "old\($0)" }
            self.control = control
            try asCoTenant("""
                cd '\(tmp)' && mkdir d && cd d && i=1 && while [ $i -le \(count) ]; do echo "file $i" > old$i; i=$((i+1)); done && \
                echo fresh > new\(control ? " && mkdir ../e && echo old > ../e/old1 && echo fresh > ../e/new" : "")
                """)
            let old = at(daysAgo: 12, plusNs: 777_777_777)
            for name in names {
                setTimes(tmp + "/d/" + name, accessNs: old, modificationNs: old)
                #expect(link(tmp + "/d/" + name, outside + "/" + name) == 0)
            }
            try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: outside + "/plain"))
            chmod(outside + "/plain", 0o600)
            setTimes(outside + "/plain", accessNs: at(daysAgo: 40, plusNs: 888_888_888), modificationNs: at(daysAgo: 41, plusNs: 999_999_999))
            setTimes(outside, accessNs: outsideTimes.accessNs, modificationNs: outsideTimes.modificationNs)
            setTimes(tmp + "/d", accessNs: dTimes.accessNs, modificationNs: dTimes.modificationNs)
            if control {
                setTimes(tmp + "/e/old1", accessNs: old, modificationNs: old)
                setTimes(tmp + "/e", accessNs: eTimes.accessNs, modificationNs: eTimes.modificationNs)
            }
            let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
            #expect(plan.status == 0, "\(plan)")
            #expect(plan.stdout.contains("Plan: \(count + (control ? 1 : 0)) to delete"), "\(plan)")
        }

        /// Runs `script` with /bin/sh as uid/gid 12345 and no supplementary groups; it must succeed.
        func asCoTenant(_ script: String) throws {
            let r = try CoTenant.sh(script)
            #expect(r.status == 0, "co-tenant script failed: \(r.stderr)")
        }

        /// Everything outside the root, by known names only (the folder is never listed before it is compared).
        func outsideStamps() -> [String: Stamp] {
            var stamps: [String: Stamp] = [:]
            for name in [".", "plain"] + names { stamps[name] = Stamp(name == "." ? outside : outside + "/" + name) }
            return stamps
        }

        /// Checks the outside folder against `before`: the folder and the plain file exactly (times to the
        /// nanosecond, ctime, inode); each hard link exactly too, except that its link count drops by one (and
        /// its ctime moves) when, and only when, its twin in the root is gone. Then its names and contents, read
        /// with O_NOATIME so that checking changes nothing a later check compares.
        func expectOutsideUnchanged(since before: [String: Stamp], twinsInRoot: Set<String>,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            let now = outsideStamps()
            #expect(now["."] == before["."], "the outside folder", sourceLocation: sourceLocation)
            #expect(now["."]?.accessNs == outsideTimes.accessNs && now["."]?.modificationNs == outsideTimes.modificationNs,
                    "the outside folder's atime and mtime as made", sourceLocation: sourceLocation)
            #expect(now["plain"] == before["plain"], "outside/plain", sourceLocation: sourceLocation)
            for name in names {
                guard var expected = before[name], let seen = now[name] else {
                    Issue.record("outside/\(name) is gone", sourceLocation: sourceLocation)
                    continue
                }
                if !twinsInRoot.contains(name) {
                    expected.links -= 1
                    expected.changeNs = seen.changeNs
                }
                #expect(seen == expected, "outside/\(name)", sourceLocation: sourceLocation)
            }
            #expect(CoTenantDirectoryTimesTests.quietNames(outside) == (["plain"] + names).sorted(), sourceLocation: sourceLocation)
            #expect(CoTenantDirectoryTimesTests.quietRead(outside + "/plain") == "keep me\n", sourceLocation: sourceLocation)
            for (index, name) in names.enumerated() {
                #expect(CoTenantDirectoryTimesTests.quietRead(outside + "/" + name) == "file \(index + 1)\n", "outside/\(name)",
                        sourceLocation: sourceLocation)
            }
            #expect(outsideStamps() == now, "checking changed nothing", sourceLocation: sourceLocation)
        }

        /// The names of a folder inside the root, listed without moving its atime.
        func names(in rel: String) throws -> [String] {
            guard let names = CoTenantDirectoryTimesTests.quietNames(root + "/" + rel) else { throw POSIXError(.ENOENT) }
            return names
        }

        /// Every `times` intent of the journal from line `from` on, as (path, inode, atime set, mtime set).
        func timesIntents(from: Int = 0) throws -> [(path: String, inode: UInt64, accessNs: Int64, modificationNs: Int64)] {
            try journalLines(root).dropFirst(from).compactMap { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                guard let rec = object?["rec"] as? [String: Any], rec["type"] as? String == "intent",
                      rec["change"] as? String == "times" else { return nil }
                return (rec["path"] as? String ?? "?", (rec["ino"] as? NSNumber)?.uint64Value ?? 0,
                        (rec["atimeNs"] as? NSNumber)?.int64Value ?? 0, (rec["setMtimeNs"] as? NSNumber)?.int64Value ?? 0)
            }
        }
    }

    /// The summary line of an apply, as counts: `applied: 3 delete, 2 skipped; ...`, `applied: nothing, 2 skipped`.
    static func summary(_ stdout: String) -> (deleted: Int, skipped: Int)? {
        guard let line = stdout.split(separator: "\n").last(where: { $0.hasPrefix("applied: ") }) else { return nil }
        func number(before word: String) -> Int {
            guard let range = line.range(of: #"\d+ "# + word, options: .regularExpression) else { return 0 }
            return Int(line[range].split(separator: " ")[0]) ?? -1
        }
        return (number(before: "delete"), number(before: "skipped"))
    }

    @Test("a folder swapped for a symlink to an outside folder after the plan: its deletes are skipped, the outside folder keeps its times to the nanosecond",
          .enabled(if: CoTenant.isAvailable))
    func symlinkOutAfterPlan() throws {
        let w = try World(count: 3)
        try w.asCoTenant("cd '\(w.tmp)' && mv d d.away && ln -s '\(w.outside)' d")
        let outside = w.outsideStamps()
        let away = Stamp(w.tmp + "/d.away")
        let eBefore = try #require(Stamp(w.tmp + "/e"))

        let run = try policyctl(["apply", w.planFile, "--yes"])
        #expect(run.signal == nil)
        // A planned entry whose folder is no directory now is skipped as vanished, which is no failure: exit 0.
        #expect(run.status == 0, "\(run)")
        for name in w.names {
            #expect(run.stdout.contains("skipped delete tmp/d/\(name): vanished: its folder is gone or is no longer a directory"), "\(run)")
        }
        #expect(run.stdout.contains("applied: 1 delete, 3 skipped;"), "\(run)")

        try w.expectOutsideUnchanged(since: outside, twinsInRoot: Set(w.names))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: w.tmp + "/d") == w.outside)
        #expect(Stamp(w.tmp + "/d.away") == away, "the real folder, moved away, is untouched")
        #expect(try w.names(in: "tmp/d.away") == ["new"] + w.names)
        // The folder nobody swapped had an entry removed and its times put back, as made; it is the only one.
        let e = try #require(Stamp(w.tmp + "/e"))
        #expect((e.accessNs, e.modificationNs) == (eBefore.accessNs, eBefore.modificationNs))
        #expect((e.accessNs, e.modificationNs) == (w.eTimes.accessNs, w.eTimes.modificationNs))
        #expect(try w.names(in: "tmp/e") == ["new"])
        let intents = try w.timesIntents()
        #expect(intents.map(\.path) == ["tmp/e"])
        #expect(intents.map(\.inode) == [e.inode])
        #expect(try !journalLines(w.root).contains { $0.contains(w.outside) }, "no record names the outside folder")
        #expect(try policyctl(["recover", "--root", w.root]).stdout == "Nothing to recover: no interrupted transaction under \(w.root).\n")
    }

    @Test("a folder swapped for another directory after the plan keeps its own times, never the old folder's; the old one, moved away, is untouched",
          .enabled(if: CoTenant.isAvailable), arguments: ["empty", "hard links of the planned files"])
    func directorySwappedAfterPlan(_ filling: String) throws {
        let w = try World(count: 3)
        let newAccess = Self.at(daysAgo: 3, plusNs: 123_456_789), newModification = Self.at(daysAgo: 4, plusNs: 987_654_321)
        let links = filling == "empty" ? "" : w.names.map { " && ln d.away/\($0) d/\($0)" }.joined()
        // The new folder gets times of the co-tenant's choosing, set last (touch -a, then -m, exact to the ns).
        try w.asCoTenant("""
            cd '\(w.tmp)' && mv d d.away && mkdir d\(links) && \
            touch -a -d @\(newAccess / 1_000_000_000).\(String(format: "%09lld", newAccess % 1_000_000_000)) d && \
            touch -m -d @\(newModification / 1_000_000_000).\(String(format: "%09lld", newModification % 1_000_000_000)) d
            """)
        let swapped = try #require(Stamp(w.tmp + "/d"))
        #expect((swapped.accessNs, swapped.modificationNs) == (newAccess, newModification))
        let away = try #require(Stamp(w.tmp + "/d.away"))
        #expect(away.inode != swapped.inode)
        #expect((away.accessNs, away.modificationNs) == (w.dTimes.accessNs, w.dTimes.modificationNs))
        let outside = w.outsideStamps()

        let run = try policyctl(["apply", w.planFile, "--yes"])
        #expect(run.signal == nil)
        #expect(run.status == 0, "\(run)")
        let d = try #require(Stamp(w.tmp + "/d"))
        #expect(d.inode == swapped.inode)
        #expect((d.accessNs, d.modificationNs) == (newAccess, newModification), "the new folder's own times")
        #expect(d.accessNs != w.dTimes.accessNs && d.modificationNs != w.dTimes.modificationNs, "never the old folder's")
        #expect(Stamp(w.tmp + "/d.away") == away, "the old folder, moved away: not even its ctime moved")
        #expect(try w.names(in: "tmp/d.away") == ["new"] + w.names)
        #expect(try w.names(in: "tmp/d") == [])
        let e = try #require(Stamp(w.tmp + "/e"))
        let intents = try w.timesIntents()
        if filling == "empty" {
            for name in w.names {
                #expect(run.stdout.contains("skipped delete tmp/d/\(name): vanished since the plan"), "\(run)")
            }
            #expect(run.stdout.contains("applied: 1 delete, 3 skipped;"), "\(run)")
            #expect(intents.map(\.path) == ["tmp/e"])
            #expect(intents.map(\.inode) == [e.inode])
        } else {
            // The links carry the planned identity (dev, ino, size, mtime): deleted from the new folder, which
            // then gets back the times it had when this apply first changed it, the co-tenant's, not the old ones.
            #expect(run.stdout.contains("applied: 4 delete;"), "\(run)")
            #expect(intents.count == 2)
            let dIntent = try #require(intents.first { $0.path == "tmp/d" })
            #expect(dIntent.inode == swapped.inode)
            #expect((dIntent.accessNs, dIntent.modificationNs) == (newAccess, newModification))
            #expect(intents.first { $0.path == "tmp/e" }?.inode == e.inode)
        }
        #expect((e.accessNs, e.modificationNs) == (w.eTimes.accessNs, w.eTimes.modificationNs))
        // With the links, each outside file lost exactly the name the co-tenant made in the new folder.
        try w.expectOutsideUnchanged(since: outside, twinsInRoot: filling == "empty" ? Set(w.names) : [])
        #expect(try policyctl(["recover", "--root", w.root]).status == 0)
    }

    @Test("a folder swapped after the plan for one holding hard links gets its own times back between groups, as the run leaves it: never the old folder's, nothing outside changes",
          .enabled(if: CoTenant.isAvailable))
    func swappedFolderRestoredBetweenGroups() throws {
        // The co-tenant's `c` (600 old files) and `d` (300): deletes go from the last path back, so the first
        // group (256) and the second (512) end inside `c` after all of `d`, and the third group's start is where
        // the run leaves `d` for good. After the plan, `d` is swapped for a new folder holding hard links of the
        // planned files (their identity is the plan's), with times of the co-tenant's choosing.
        let scratch = ScratchDirectory("cotimes-groups")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root"), tmp = root + "/tmp", outside = scratch.sub("outside")
        let policy = scratch.path + "/policy.yaml", planFile = scratch.path + "/plan.json"
        mkdir(tmp, 0o755)
        chmod(tmp, 0o1777)
        try writePolicy(policy, Self.policyText)
        let r = try CoTenant.sh("""
            cd '\(tmp)' && for f in c d; do mkdir $f; n=600; [ $f = d ] && n=300; i=1; \
            while [ $i -le $n ]; do echo "file $i" > $f/old$i; i=$((i+1)); done; echo fresh > $f/new; done
            """)
        #expect(r.status == 0, "\(r.stderr)")
        let old = Self.at(daysAgo: 12, plusNs: 777_777_777)
        for f in ["c", "d"] {
            for i in 1...(f == "c" ? 600 : 300) { Self.setTimes("\(tmp)/\(f)/old\(i)", accessNs: old, modificationNs: old) }
        }
        for i in 1...300 { #expect(link("\(tmp)/d/old\(i)", "\(outside)/old\(i)") == 0) }
        Self.setTimes(outside, accessNs: Self.at(daysAgo: 20, plusNs: 333_333_333), modificationNs: Self.at(daysAgo: 30, plusNs: 444_444_444))
        let dTimes = (accessNs: Self.at(daysAgo: 9, plusNs: 111_111_111), modificationNs: Self.at(daysAgo: 10, plusNs: 222_222_222))
        Self.setTimes(tmp + "/d", accessNs: dTimes.accessNs, modificationNs: dTimes.modificationNs)
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(plan.stdout.contains("Plan: 900 to delete"), "\(plan)")

        let newAccess = Self.at(daysAgo: 3, plusNs: 123_456_789), newModification = Self.at(daysAgo: 4, plusNs: 987_654_321)
        let s = try CoTenant.sh("""
            cd '\(tmp)' && mv d d.away && mkdir d && i=1 && while [ $i -le 300 ]; do ln d.away/old$i d/old$i; i=$((i+1)); done && \
            touch -a -d @\(newAccess / 1_000_000_000).\(String(format: "%09lld", newAccess % 1_000_000_000)) d && \
            touch -m -d @\(newModification / 1_000_000_000).\(String(format: "%09lld", newModification % 1_000_000_000)) d
            """)
        #expect(s.status == 0, "\(s.stderr)")
        let swapped = try #require(Stamp(tmp + "/d")), away = try #require(Stamp(tmp + "/d.away"))
        let outsideBefore = Stamp(outside)

        // Unlinked on the run's thread: with workers, a loaded machine can leave `d`'s last removals unnoted at
        // the third group's start, and its times then wait for the end (as designed, but not what this pins).
        let run = try policyctl(["apply", planFile, "--yes", "--max-delete", "none"], environment: ["POLICYCTL_UNLINK_IN_PLACE": "1"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("applied: 900 delete;"), "\(run)")
        let d = try #require(Stamp(tmp + "/d"))
        #expect(d.inode == swapped.inode)
        #expect((d.accessNs, d.modificationNs) == (newAccess, newModification), "the new folder's own times")
        #expect(Stamp(tmp + "/d.away") == away, "the old folder, moved away: not even its ctime moved")
        #expect(Stamp(outside) == outsideBefore, "the outside folder, to the nanosecond")
        #expect(Self.quietNames(outside)?.count == 300)
        // The journal: `d`'s times intent (the new folder's inode, its own times) comes before the unlinks of
        // the third group, in `c`: put back as the run left `d`, not at the end.
        let lines = try journalLines(root)
        let dIntent = try #require(lines.firstIndex { $0.contains("\"change\":\"times\"") && $0.contains("\"path\":\"tmp/d\"") })
        let lastUnlink = try #require(lines.lastIndex { $0.contains("\"path\":\"tmp/c/old") })
        #expect(dIntent < lastUnlink)
        #expect(lines[dIntent].contains("\"ino\":\(swapped.inode)"))
        #expect(lines[dIntent].contains("\"atimeNs\":\(newAccess)") && lines[dIntent].contains("\"setMtimeNs\":\(newModification)"))
        #expect(try policyctl(["recover", "--root", root]).stdout == "Nothing to recover: no interrupted transaction under \(root).\n")
    }

    // MARK: Races while apply and recovery run

    /// The co-tenant's swap loop, in the background until `stop()`: each round moves `d` away, puts a symlink
    /// to the outside folder in its place, then an empty directory, then the real folder back. It stops only
    /// between rounds, so `d` is the real folder again once it has stopped.
    static func swapLoop(_ w: World, round: Int = 1) throws -> CoTenantLoop {
        try CoTenantLoop(in: w.scratch.path, round: round) { stopFile in """
            set -e; cd '\(w.tmp)'; n=0
            while [ ! -e '\(stopFile)' ]; do
              mv d d.real; ln -s '\(w.outside)' d; rm d; mkdir d; rmdir d; mv d.real d; n=$((n+1))
            done
            echo $n
            """ }
    }

    @Test("the co-tenant swaps the folder for a symlink out and a stranger directory while apply runs, three runs: nothing outside changes, the counts agree, times go only on the real folder, recover has nothing to do",
          .enabled(if: CoTenant.isAvailable))
    func swapsDuringApply() throws {
        let w = try World(count: 600, control: false)
        let outside = w.outsideStamps()
        let realInode = try #require(Stamp(w.tmp + "/d")).inode
        for round in 1...3 {
            let seen = (try? journalLines(w.root))?.count ?? 0
            let leftBefore = Set(try w.names(in: "tmp/d")).subtracting(["new"])
            let dBefore = try #require(Stamp(w.tmp + "/d"))
            let loop = try Self.swapLoop(w, round: round)
            defer { loop.stop() }
            // 1 ms after each change: a run that removes files lasts long enough for many rounds of swaps.
            // --max-delete none: the plan deletes 600 of about 600 entries, past apply --yes's default cap.
            let run = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"], environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "1"])
            let stopped = loop.stop()
            #expect(stopped.status == 0, "round \(round): the swap loop failed: \(stopped.stderr)")
            #expect(stopped.rounds >= 1)

            #expect(run.signal == nil)
            // Entries whose folder was a symlink or a stranger at that moment are skipped as vanished: exit 0.
            #expect(run.status == 0, "round \(round): \(run)")
            let left = Set(try w.names(in: "tmp/d")).subtracting(["new"])
            #expect(left.isSubset(of: leftBefore))
            #expect(try w.names(in: "tmp") == ["d"], "round \(round): no symlink, stranger or moved-away folder is left")
            #expect(try #require(Stamp(w.tmp + "/d")).inode == realInode)
            // Whatever the interleaving, the report says what happened: each planned file deleted or skipped.
            let counts = try #require(Self.summary(run.stdout), "round \(round): \(run)")
            #expect(counts.deleted == leftBefore.count - left.count, "round \(round): \(run)")
            #expect(counts.deleted + counts.skipped == w.names.count, "round \(round): \(run)")
            try w.expectOutsideUnchanged(since: outside, twinsInRoot: left)
            // Times were only ever set on the real folder (by inode), to what it had before the run; never on
            // the outside folder or a stranger.
            for intent in try w.timesIntents(from: seen) {
                #expect(intent.path == "tmp/d" && intent.inode == realInode, "round \(round): \(intent)")
                #expect((intent.accessNs, intent.modificationNs) == (dBefore.accessNs, dBefore.modificationNs), "round \(round)")
            }
            let recover = try policyctl(["recover", "--root", w.root])
            #expect(recover.status == 0)
            #expect(recover.stdout == "Nothing to recover: no interrupted transaction under \(w.root).\n", "round \(round): \(recover)")
        }
    }

    /// The ops of every `undone` record of the journal: each unlink intent recovery finished, once.
    static func finishedOps(_ root: String) throws -> [Int] {
        try journalLines(root).flatMap { line -> [Int] in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let rec = object?["rec"] as? [String: Any], rec["type"] as? String == "undone" else { return [] }
            return (rec["ops"] as? [NSNumber] ?? []).map(\.intValue)
        }
    }

    @Test("killed with its deletes journaled while the co-tenant swaps, then recovered while it still swaps: nothing outside changes, recovery converges once the swaps stop, each finished delete is journaled",
          .enabled(if: CoTenant.isAvailable))
    func swapsDuringCrashAndRecovery() throws {
        let w = try World(count: 600, control: false)
        let outside = w.outsideStamps()
        for round in 1...3 {
            let loop = try Self.swapLoop(w, round: round)
            defer { loop.stop() }
            // Killed once the begin record and the first group's unlink intents are durable, before any unlink.
            let run = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "2"])
            #expect(run.signal == SIGKILL, "round \(round): \(run)")
            let transaction = try #require(journalLines(w.root).last.flatMap { line in
                line.range(of: #""tx":"[^"]+""#, options: .regularExpression).map { String(line[$0].dropFirst(6).dropLast()) }
            })
            // While the folder comes and goes, recovery finishes a delete only on the exact entry through the real
            // folder. One it could not reach but sees on its second look is not closed: exit 74, retried later.
            let racing = try policyctl(["recover", "--root", w.root])
            let stopped = loop.stop()
            #expect(stopped.status == 0, "round \(round): the swap loop failed: \(stopped.stderr)")
            #expect(stopped.rounds >= 1)
            let calm = try policyctl(["recover", "--root", w.root])
            #expect(calm.status == 0, "round \(round): \(calm)")
            if racing.status == 0 {
                #expect(racing.stdout.contains("recover: rolled back interrupted transaction \(transaction) (0 changes undone"), "round \(round): \(racing)")
                #expect(calm.stdout == "Nothing to recover: no interrupted transaction under \(w.root).\n", "round \(round): \(calm)")
            } else {
                #expect(racing.status == 74, "round \(round): \(racing)")
                #expect(racing.stderr.hasPrefix("Error: recovery of transaction \(transaction) is incomplete: tmp/d/old"), "round \(round): \(racing)")
                #expect(calm.stdout.contains("recover: rolled back interrupted transaction \(transaction) (0 changes undone"), "round \(round): \(calm)")
            }
            let left = Set(try w.names(in: "tmp/d")).subtracting(["new"])
            #expect(try w.names(in: "tmp") == ["d"], "round \(round)")
            let finished = try Self.finishedOps(w.root)
            #expect(finished.count == w.names.count - left.count, "round \(round): recovery finished exactly the deletes that are gone")
            try w.expectOutsideUnchanged(since: outside, twinsInRoot: left)
            #expect(try w.timesIntents().isEmpty, "no run got as far as the folder times")
        }
        // The tree is fit for the next run: without the swaps the same plan finishes, and the folder keeps the
        // times it had before that run (recovery's deletes moved its mtime).
        let left = Set(try w.names(in: "tmp/d")).subtracting(["new"])
        let before = try #require(Stamp(w.tmp + "/d"))
        let clean = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"])
        #expect(clean.status == 0, "\(clean)")
        #expect(Self.summary(clean.stdout)?.deleted == left.count, "\(clean)")
        let d = try #require(Stamp(w.tmp + "/d"))
        #expect((d.accessNs, d.modificationNs) == (before.accessNs, before.modificationNs))
        #expect(try w.names(in: "tmp/d") == ["new"])
        try w.expectOutsideUnchanged(since: outside, twinsInRoot: [])
    }
}
