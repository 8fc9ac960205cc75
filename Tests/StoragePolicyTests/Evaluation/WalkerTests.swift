// The walk under stress: paths past PATH_MAX, a tiny descriptor budget, one thread or two, unreadable and
// vanishing entries, the state folder, and the promise that planning changes nothing on disk.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Walker") struct WalkerTests {
    static let longName = "a-directory-name-of-thirty-one"

    @Test("walks 200 levels deep, past PATH_MAX, with any thread count and descriptor budget",
          arguments: [(1, nil), (2, nil), (2, 2), (1, 1)] as [(Int, Int?)])
    func deep(threads: Int, budget: Int?) throws {
        let tree = try Tree {
            Dir("tmp") {
                Nest(Self.longName, depth: 200) { File("deep.dat", age: .days(3)) }
            }
        }
        defer { tree.remove() }
        let deepPath = "tmp/" + Array(repeating: Self.longName, count: 200).joined(separator: "/") + "/deep.dat"
        #expect(deepPath.utf8.count > Int(PATH_MAX))
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))], threads: threads, budget: budget)
        #expect(p.lines == ["delete " + deepPath])
        #expect(p.summary.entriesScanned == 202)
        #expect(p.skipped.isEmpty)
    }

    /// A comb: a 60-deep spine where every level also holds a side directory with an old file, so many
    /// directories wait at once and a budget of 2 forces reopening paths from their ancestors.
    static func comb(depth: Int) -> any TreeNode {
        var node: any TreeNode = File("leaf.dat", age: .days(3))
        for level in (0..<depth).reversed() {
            let inner = node
            node = Dir("s\(level)") {
                inner
                Dir("side") { File("f\(level).dat", age: .days(3)) }
            }
        }
        return node
    }

    @Test("a tiny descriptor budget changes nothing in the plan")
    func budget() throws {
        let tree = try Tree { Dir("tmp") { Self.comb(depth: 60) } }
        defer { tree.remove() }
        var expected: [String] = []
        var prefix = "tmp"
        for level in 0..<60 {
            prefix += "/s\(level)"
            expected.append("delete \(prefix)/side/f\(level).dat")
        }
        expected.append("delete \(prefix)/leaf.dat")
        expected.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let roomy = try plan(tree, [rule("r", "tmp", expire(.days(1)))], threads: 2)
        let tight = try plan(tree, [rule("r", "tmp", expire(.days(1)))], threads: 2, budget: 2)
        #expect(roomy.lines == expected)
        #expect(tight.lines == expected)
        #expect(try tight.jsonData() == roomy.jsonData())
    }

    @Test("the root's .policyctl state folder is never seen; one elsewhere is an ordinary folder")
    func stateFolder() throws {
        let tree = try Tree {
            Dir(".policyctl", age: .days(30)) { File("journal", age: .days(30)) }
            Dir("tmp") { Dir(".policyctl", age: .days(30)) { File("x", age: .days(30)) } }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("all", "", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/.policyctl"])
        #expect(p.summary.entriesScanned == 3)
    }

    @Test("an entry that vanishes between listing and stat is skipped, and the walk goes on")
    func vanished() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("victim.dat", age: .days(3))
                File("other.dat", age: .days(3))
            }
        }
        defer { tree.remove() }
        let victim = tree.root + "/tmp/victim.dat"
        var options = tree.options(threads: 1)
        options.willStat = { p in if p == path("tmp/victim.dat") { _ = unlink(victim) } }
        let policy = Policy(name: "t", rules: [rule("r", "tmp", expire(.days(1)))])
        let p = try Planner(policy: policy, root: tree.root, options: options).plan()
        #expect(p.lines == ["delete tmp/other.dat"])
        #expect(p.skippedLines == ["tmp/victim.dat: vanished during the walk"])
    }

    /// Runs `body` with this thread's file-system uid set to nobody: root loses CAP_DAC_OVERRIDE for this
    /// thread only (setfsuid is per thread), so a mode-000 directory is really unreadable, while tests on
    /// other threads keep running as root.
    static func asNobody<R>(_ body: () throws -> R) rethrows -> R {
        typealias SetFSUID = @convention(c) (UInt32) -> Int32
        let handle = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid")!
        let setfsuid = unsafeBitCast(handle, to: SetFSUID.self)
        _ = setfsuid(65534)
        defer { _ = setfsuid(0) }
        return try body()
    }

    @Test("an unreadable directory is skipped with its reason, and the walk goes on", .enabled(if: getuid() == 0))
    func unreadable() throws {
        let tree = try Tree {
            Dir("tmp") {
                Dir("locked", age: .days(3), mode: 0o000) { File("secret.dat", age: .days(3)) }
                Dir("open") { File("old.dat", age: .days(3)) }
            }
        }
        defer { tree.remove() }
        chmod(tree.root, 0o755)
        let before = Manifest.take(tree.root)
        let p = try Self.asNobody {
            try plan(tree, [rule("r", "tmp", expire(.days(1)))], threads: 1)
        }
        #expect(p.lines == ["delete tmp/open/old.dat"])
        #expect(p.skippedLines == ["tmp/locked: cannot read directory: Permission denied (EACCES)"])
        // Not the owner, the walk may not use O_NOATIME: directory atimes may move (relatime), nothing else.
        func withoutDirectoryAtimes(_ m: [ManifestEntry]) -> [ManifestEntry] {
            m.map { e in var e = e; if e.type == UInt32(S_IFDIR) { e.atimeNs = 0 }; return e }
        }
        #expect(withoutDirectoryAtimes(Manifest.take(tree.root)) == withoutDirectoryAtimes(before))
    }

    @Test("the same tree and policy give the same plan, whatever the threads do")
    func deterministic() throws {
        let tree = try Tree {
            Dir("tmp") {
                for d in 0..<20 {
                    Dir("d\(d)", age: .days(d % 3 == 0 ? 3 : 0)) {
                        for f in 0..<30 { File("f\(f).dat", age: .hours(Int64(f * 2))) }
                    }
                }
            }
        }
        defer { tree.remove() }
        let rules = [rule("r", "tmp", expire(.days(1)))]
        let one = try plan(tree, rules, threads: 1).jsonData()
        for _ in 0..<5 {
            #expect(try plan(tree, rules, threads: 2).jsonData() == one)
        }
    }
}

/// Bind mounts inside the walked tree (root only): a bind mount has the device of its source, so only the
/// mount id tells it apart. Every mount is detached in a defer before the trees are removed.
@Suite("Walker and mounts") struct WalkerMountTests {
    static let canBindMount: Bool = {
        guard getuid() == 0, let probe = try? Tree({ Dir("a"); Dir("b") }) else { return false }
        defer { probe.remove() }
        guard mount(probe.root + "/a", probe.root + "/b", nil, UInt(MS_BIND), nil) == 0 else { return false }
        umount2(probe.root + "/b", Int32(MNT_DETACH))
        return true
    }()

    @Test("a bind mount of an outside folder on the same device is not entered and is reported as skipped",
          .enabled(if: WalkerMountTests.canBindMount))
    func bindMountSkipped() throws {
        let outside = try Tree { File("precious.dat", age: .days(30)); Dir("deeper") { File("more.dat", age: .days(30)) } }
        defer { outside.remove() }
        let tree = try Tree { Dir("tmp") { Dir("old", age: .days(3)) { Dir("share") }; File("old.dat", age: .days(3)) } }
        defer { tree.remove() }
        let target = tree.root + "/tmp/old/share"
        #expect(mount(outside.root, target, nil, UInt(MS_BIND), nil) == 0)
        defer { umount2(target, Int32(MNT_DETACH)) }
        var a = stat(), b = stat()
        #expect(lstat(target, &a) == 0 && lstat(tree.root + "/tmp", &b) == 0 && a.st_dev == b.st_dev, "same device: st_dev alone cannot tell")

        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/old.dat"])
        #expect(p.skipped.map { "\($0.path.escaped): \($0.reason)" } == ["tmp/old/share: mount point; not entered"])
    }

    @Test("a file bind-mounted into the tree: its status fails with EXDEV, so no rule acts on it",
          .enabled(if: WalkerMountTests.canBindMount))
    func fileBindMount() throws {
        let outside = try Tree { File("precious.dat", age: .days(30)) }
        defer { outside.remove() }
        let tree = try Tree { Dir("tmp") { File("bait.dat", age: .days(3)); File("old.dat", age: .days(3)) } }
        defer { tree.remove() }
        let target = tree.root + "/tmp/bait.dat"
        #expect(mount(outside.root + "/precious.dat", target, nil, UInt(MS_BIND), nil) == 0)
        defer { umount2(target, Int32(MNT_DETACH)) }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/old.dat"])
        #expect(p.skipped.map { "\($0.path.escaped): \($0.reason)" } == ["tmp/bait.dat: mount point; not entered"])
    }

    @Test("statx's mount id and name_to_handle_at's agree; a bind mount's differs from its parent's")
    func mountIDs() throws {
        let outside = try Tree { File("f", age: .days(1)) }
        defer { outside.remove() }
        let tree = try Tree { Dir("share"); File("g", age: .days(1)) }
        defer { tree.remove() }
        let root = try DirectoryHandle.open(root: tree.root)
        let rootStatus = try root.status()
        #expect(rootStatus.mountID != 0)
        #expect(root.mountIDFromHandle() == rootStatus.mountID)
        #expect(root.mountIDFromHandle(of: FileName("g")!) == (try root.status(of: FileName("g")!)).mountID)
        guard WalkerMountTests.canBindMount else { return }
        let target = tree.root + "/share"
        #expect(mount(outside.root, target, nil, UInt(MS_BIND), nil) == 0)
        defer { umount2(target, Int32(MNT_DETACH)) }
        let share = try root.status(of: FileName("share")!)
        #expect(share.device == rootStatus.device)
        #expect(share.mountID != rootStatus.mountID)
        #expect(root.mountIDFromHandle(of: FileName("share")!) == share.mountID)
        #expect(!share.isOnSameMount(as: rootStatus))
        #expect(throws: FileSystemError(.openat, path: RelativePath("share")!, errno: .crossDevice)) {
            _ = try root.openDirectory(FileName("share")!)
        }
    }
}
