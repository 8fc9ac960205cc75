// The in-use strategies, each run on Linux: /proc (the default, whose plans stay as they were), a /proc that is
// missing, macOS's libproc (which off macOS cannot read its table), and iOS's: the app's busy files plus the flock
// probe. Whatever a strategy cannot read keeps the deletes it judges, and the plan says which strategy judged.
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
@testable import StoragePolicyApply
import Synchronization
import Testing
import TreeFixture

@Suite("in-use strategies: /proc, libproc, the app's busy files")
struct InUseStrategyTests {
    /// tmp/old.dat, tmp/busy.dat, tmp/locked.dat (flocked by this test while `body` runs), all two days old.
    static func withTree(_ body: (Tree) throws -> Void) throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old.dat", age: .days(2))
                File("busy.dat", age: .days(2))
                File("locked.dat", age: .days(2))
            }
        }
        defer { tree.remove() }
        let fd = open(tree.root + "/tmp/locked.dat", O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        try body(tree)
    }

    static func plan(_ tree: Tree, _ strategy: any InUseStrategy) throws -> Plan {
        var options = tree.options()
        options.inUseStrategy = strategy
        let policy = Policy(name: "test", rules: [rule("tmp-expiry", "tmp", expire(.hours(24)))])
        return try Planner(policy: policy, root: tree.root, options: options).plan()
    }

    static let keptNote = "entries that expire, quota and trash rules would delete are kept (set 'inUse: ignore' on a rule to delete regardless)"

    @Test("Linux's /proc is the default and names itself nowhere: plans are as before")
    func procDefault() throws {
        #if os(Linux)
        #expect(InUseStrategies.platform() is ProcInUseStrategy)
        #expect(InUseStrategies.platform().note == nil)
        #endif
        try Self.withTree { tree in
            let p = try Self.plan(tree, ProcInUseStrategy())
            #expect(p.lines == ["delete tmp/busy.dat", "delete tmp/old.dat"])
            #expect(!p.notes.contains { $0.hasPrefix("in-use check") })
            #expect(p.skippedLines.contains { $0.hasPrefix("tmp/locked.dat: in use by ") && $0.hasSuffix("holds a BSD flock") })
        }
    }

    @Test("a missing proc root keeps every delete it judges, and the plan says so and names the strategy")
    func missingProc() throws {
        try Self.withTree { tree in
            let p = try Self.plan(tree, ProcInUseStrategy(proc: "/nonexistent-proc"))
            #expect(p.lines == [])
            #expect(p.notes.first == "in-use check: judged by the open files in /nonexistent-proc/*/fd and the flocks in /nonexistent-proc/locks")
            #expect(p.notes.contains { $0.hasPrefix("in-use check: /nonexistent-proc could not be read (") && $0.hasSuffix(Self.keptNote) })
            #expect(p.skipped.count == 3)
            for line in p.skippedLines {
                #expect(line.contains(": in use unknown: /nonexistent-proc could not be read (") && line.hasSuffix("; kept"))
            }
        }
    }

    @Test("libproc, off macOS, cannot be read: every delete it judges is kept, and the plan says why")
    func libprocUnreadable() throws {
        #if !os(macOS)
        try Self.withTree { tree in
            let p = try Self.plan(tree, LibprocInUseStrategy())
            #expect(p.lines == [])
            #expect(p.notes.first == "in-use check: judged by libproc (the open files of every process this user may inspect) and a flock probe of each entry")
            #expect(p.notes.contains("in-use check: libproc could not be read (libproc: Function not implemented (ENOSYS) [proc_listallpids]); " + Self.keptNote))
            #expect(p.skippedLines.sorted() == ["busy.dat", "locked.dat", "old.dat"].map {
                "tmp/\($0): in use unknown: libproc could not be read (libproc: Function not implemented (ENOSYS) [proc_listallpids]); kept"
            })
        }
        #endif
    }

    @Test("iOS: the files the app says are busy and the flocked ones are kept, the rest go")
    func appStrategy() throws {
        try Self.withTree { tree in
            let busy = AppInUseStrategy(busy: { $0 == RelativePath("tmp/busy.dat")! })
            let p = try Self.plan(tree, busy)
            #expect(p.lines == ["delete tmp/old.dat"])
            #expect(p.notes == ["in-use check: judged by the files the app says are busy and a flock probe of each entry (no process table: on iOS only the app's own processes can hold its files)"])
            #expect(p.skippedLines.contains("tmp/busy.dat: in use: the app says it is busy"))
            #expect(p.skippedLines.contains { $0.hasPrefix("tmp/locked.dat: in use") && $0.hasSuffix("holds a BSD flock") })
            #expect(p.skipped.count == 2)

            // Without a list from the app only the flock probe judges, and the note says that.
            let probeOnly = try Self.plan(tree, AppInUseStrategy(busy: nil))
            #expect(probeOnly.lines == ["delete tmp/busy.dat", "delete tmp/old.dat"])
            #expect(probeOnly.notes == ["in-use check: judged by a flock probe of each entry (no process table: on iOS only the app's own processes can hold its files)"])
        }
    }

    @Test("iOS: a directory holding a file the app says is busy is kept whole")
    func busyInsideDirectory() throws {
        let tree = try Tree {
            Dir("tmp") { Dir("download") { File("part.dat", age: .days(2)) } }
        }
        defer { tree.remove() }
        let root = try DirectoryHandle.open(root: tree.root)
        let tmp = try root.openDirectory(at: RelativePath("tmp")!)
        let name = FileName("download")!
        let check = InUseCheck.now(root: root, strategy: AppInUseStrategy(busy: { $0 == RelativePath("tmp/download/part.dat")! }))
        let reason = check.reason(parent: tmp, name: name, path: RelativePath("tmp/download")!, type: .directory,
                                  identity: try tmp.status(of: name).identity)
        #expect(reason == "holds tmp/download/part.dat, which the app says is busy; kept")
        let free = InUseCheck.now(root: root, strategy: AppInUseStrategy(busy: { _ in false }))
        #expect(free.reason(parent: tmp, name: name, path: RelativePath("tmp/download")!, type: .directory,
                            identity: try tmp.status(of: name).identity) == nil)
    }

    @Test("apply asks the same strategy again just before each delete: a file the app says became busy is kept")
    func applyKeepsBusy() throws {
        let f = try ApplyFixture()
        f.file("old.dat")
        f.file("busy.dat")
        let plan = f.plan([try f.action(.delete, "busy.dat"), try f.action(.delete, "old.dat")])
        var options = ApplyOptions(rootPath: f.rootPath)
        options.inUseRules = ["r"]
        options.inUseStrategy = AppInUseStrategy(busy: { $0 == RelativePath("busy.dat")! })
        let report = try f.apply(plan, options)
        #expect(report.outcome("old.dat") == .done)
        #expect(report.outcome("busy.dat") == .skipped("in use: the app says it is busy"))
        #expect(!f.exists("old.dat") && f.exists("busy.dat"))
    }

    @Test("a flock taken during the run is seen by the deletes of a group that starts more than FlockListings.freshness after it (/proc/locks is listed again, off the run's thread)")
    func flockTakenMidRun() throws {
        let f = try ApplyFixture()
        let names = (0..<40).map { String(format: "f%02d", $0) }
        for name in names { f.file(name) }
        let plan = f.plan(try names.map { try f.action(.delete, $0) })
        var options = ApplyOptions(rootPath: f.rootPath, groupSize: 2)
        options.inUseRules = ["r"]
        // Deletes go from the last path back (groups of 2, 4, 8, 16 and the rest): once the first group's first
        // (f39) is checked, f04 (five groups later) is flocked, and stays so.
        let held = Mutex<Int32>(-1)
        let lockedPath = f.rootPath + "/f04"
        options.willChange = { path in
            // The last delete before f04's group: from here on, every listing begun before the flock is too old
            // to be taken, whatever the timing of the groups and their listings.
            if path == RelativePath("f10")! { usleep(UInt32(FlockListings.freshness / .microseconds(1)) + 50_000) }
            guard path == RelativePath("f39")! else { return }
            held.withLock { fd in
                guard fd < 0 else { return }
                fd = open(lockedPath, O_RDONLY | O_CLOEXEC)
                precondition(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "cannot flock \(lockedPath): errno \(errno)")
            }
        }
        defer { held.withLock { if $0 >= 0 { close($0) } } }
        let report = try f.apply(plan, options)
        if case .skipped(let why) = report.outcome("f04") {
            #expect(why.hasPrefix("in use by \(getpid()) (") && why.hasSuffix("): holds a BSD flock"), "\(why)")
        } else {
            Issue.record("f04: \(String(describing: report.outcome("f04")))")
        }
        #expect(f.exists("f04"))
        #expect(names.filter { $0 != "f04" && f.exists($0) }.isEmpty)
    }

    /// How many times a strategy was read.
    final class ReadCount: Sendable { let value = Mutex(0) }

    /// The app's strategy, counting its readings.
    struct CountingStrategy: InUseStrategy {
        let count: ReadCount
        let busy: @Sendable (RelativePath) -> Bool
        var note: String? { nil }
        func read(root: DirectoryHandle?) -> InUseReading {
            count.value.withLock { $0 += 1 }
            return AppInUseStrategy(busy: busy).read(root: root)
        }
    }

    @Test("apply reads the in-use tables once, started before the run begins: the first group's deletes and a later group's are judged by that reading")
    func firstReadingBeforeTheRun() throws {
        let f = try ApplyFixture()
        let names = (0..<12).map { String(format: "f%02d", $0) }
        for name in names { f.file(name) }
        let plan = f.plan(try names.map { try f.action(.delete, $0) })
        var options = ApplyOptions(rootPath: f.rootPath, groupSize: 2)
        options.inUseRules = ["r"]
        let count = ReadCount()
        // Deletes go from the last path back: f11 is the first group's first, f02 is in the third group.
        options.inUseStrategy = CountingStrategy(count: count, busy: { $0 == RelativePath("f11")! || $0 == RelativePath("f02")! })
        let report = try f.apply(plan, options)
        #expect(count.value.withLock { $0 } == 1)
        #expect(report.outcome("f11") == .skipped("in use: the app says it is busy"))
        #expect(report.outcome("f02") == .skipped("in use: the app says it is busy"))
        #expect(names.filter { f.exists($0) } == ["f02", "f11"])
    }

    @Test("no delete of a rule that checks: the in-use tables are not read at all")
    func noReadingWithoutCheckedDeletes() throws {
        let f = try ApplyFixture()
        f.file("a")
        f.file("b")
        let plan = f.plan([try f.action(.delete, "a"), try f.action(.delete, "b")])
        var options = ApplyOptions(rootPath: f.rootPath)
        options.inUseRules = ["another-rule"]
        let count = ReadCount()
        options.inUseStrategy = CountingStrategy(count: count, busy: { _ in true })
        let report = try f.apply(plan, options)
        #expect(count.value.withLock { $0 } == 0)
        #expect(report.outcome("a") == .done && report.outcome("b") == .done)
        #expect(!f.exists("a") && !f.exists("b"))
    }

    @Test("the plan's in-use reading is started as the walk ends only when a delete can need it: a walked delete of a rule that checks, or a rule that decides its deletes after the walk")
    func planReadingStartsOnlyWhenNeeded() throws {
        let tree = try Tree { Dir("tmp") { File("old.dat", age: .days(2)) } }
        defer { tree.remove() }
        let root = try DirectoryHandle.open(root: tree.root)
        let expiry = rule("tmp-expiry", "tmp", expire(.hours(24)))
        let quota = rule("cache-quota", "cache", .quota(Quota(max: ByteSize(bytes: 10), target: .percent(100), evict: .oldest)))
        let nothingWalked = EvaluationResults()
        let walkedDelete = EvaluationResults()
        walkedDelete.actions = [Action(kind: .delete, path: RelativePath("tmp/old.dat")!, rule: "tmp-expiry", reason: "expired")]
        let count = ReadCount()
        let strategy = CountingStrategy(count: count, busy: { _ in false })
        #expect(InUseCheck.startReading(for: [expiry], walked: [nothingWalked], root: root, strategy: strategy) == nil)
        var ignoring = expiry
        ignoring.inUse = .ignore
        #expect(InUseCheck.startReading(for: [ignoring], walked: [walkedDelete], root: root, strategy: strategy) == nil)
        #expect(count.value.withLock { $0 } == 0)
        let fromWalk = try #require(InUseCheck.startReading(for: [expiry], walked: [nothingWalked, walkedDelete], root: root, strategy: strategy))
        #expect(fromWalk.value.strategyNote == nil)
        let fromQuota = try #require(InUseCheck.startReading(for: [expiry, quota], walked: [nothingWalked], root: root, strategy: strategy))
        #expect(fromQuota.value.table.unreadable == nil)
        #expect(count.value.withLock { $0 } == 2)
    }

    @Test("the hook the library exposes: PlanOptions.busyFiles reaches the platform's strategy")
    func busyFilesHook() throws {
        try Self.withTree { tree in
            var options = tree.options()
            options.busyFiles = { $0 == RelativePath("tmp/busy.dat")! }
            let policy = Policy(name: "test", rules: [rule("tmp-expiry", "tmp", expire(.hours(24)))])
            let p = try Planner(policy: policy, root: tree.root, options: options).plan()
            #expect(p.skippedLines.contains("tmp/busy.dat: in use: the app says it is busy"))
            #expect(p.lines == ["delete tmp/old.dat"])
        }
    }
}
