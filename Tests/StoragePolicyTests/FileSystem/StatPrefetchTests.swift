// The stat prefetch's hand-over: a visitor that withdraws while the helper is mid-stat sleeps until that stat
// has landed (never spinning: its thread uses next to no CPU while it waits), and afterwards the helper touches
// nothing more of the directory.
import Testing
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
import TreeFixture

@Suite("Stat prefetch") struct StatPrefetchTests {
    /// The helper's stat hook, held shut until the test opens it.
    final class Gate: Sendable {
        struct State { var entered: [RelativePath] = []; var open = false }
        let state = ConditionLocked(State())

        func hold(_ path: RelativePath) {
            state.withLock(wake: .all) { $0.entered.append(path) }
            state.withLock(when: { $0.open }) { _ in }
        }
        func open() { state.withLock(wake: .all) { $0.open = true } }
        var entered: [RelativePath] { state.withLock { $0.entered } }
    }

    /// A prefetch over `d/a`, `d/b`, `d/c` (regular files), with `willStat` as its hook.
    static func prefetch(_ root: String, willStat: (@Sendable (RelativePath) -> Void)?) throws
        -> (StatPrefetch, WalkDirectory) {
        let counter = WalkDirectory.Counter()
        let top = try WalkDirectory.open(root: root, counter: counter)
        let directory = try WalkDirectory.open(FileName("d")!, in: top.descriptor, path: path("d"), counter: counter)
        let task = StatPrefetch(descriptor: directory.descriptor, path: path("d"), directoryStatus: directory.status,
                                names: Array("a\0b\0c\0".utf8), starts: [0, 2, 4, 6],
                                types: [.regular, .regular, .regular], count: 3, willStat: willStat)
        return (task, directory)
    }

    static func tree() throws -> Tree {
        try Tree { Dir("d") { File("a"); File("b"); File("c") } }
    }

    /// CPU time of the calling thread, in nanoseconds.
    static func threadCPU() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test("a withdraw during a stat returns once that stat's result is in, and the helper stops there")
    func withdrawWaitsForTheStatInFlight() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let gate = Gate()
        let (task, directory) = try Self.prefetch(tree.root) { gate.hold($0) }
        defer { _ = directory }
        let pool = WorkerPool()
        let helper = pool.start { task.run() }
        // The helper starts from the last entry: wait until it is inside that stat.
        gate.state.withLock(when: { !$0.entered.isEmpty }) { _ in }
        let returned = Atomic<Bool>(false)
        let withdrawCPU = Atomic<Int64>(-1)
        let withdrawer = pool.start {
            let before = Self.threadCPU()
            task.withdraw()
            withdrawCPU.store(Self.threadCPU() - before, ordering: .relaxed)
            returned.store(true, ordering: .releasing)
        }
        while !task.isStopping { usleep(1_000) }
        // The helper is held mid-stat: withdraw cannot have returned, the item is not in, and it stays so
        // however long the helper takes.
        usleep(200_000)
        let returnedEarly = returned.load(ordering: .acquiring)
        #expect(!returnedEarly)
        #expect(task.result(2) == nil)
        gate.open()
        withdrawer?.wait()
        helper?.wait()
        let returnedAfter = returned.load(ordering: .acquiring)
        #expect(returnedAfter)
        // The stat in flight landed before withdraw returned; nothing after it was started.
        #expect(task.result(2)?.code == StatPrefetch.fetchedOK)
        #expect(task.result(2)?.status?.type == .regular)
        #expect(task.result(1) == nil)
        #expect(gate.entered == [path("d/c")])
        // Asleep, not spinning: 200 ms of waiting cost the withdrawing thread well under 20 ms of CPU.
        let cpu = withdrawCPU.load(ordering: .relaxed)
        #expect(cpu >= 0 && cpu < 20_000_000, "withdraw used \(cpu) ns of CPU while it waited")
    }

    @Test("withdrawn before any helper ran: returns at once, and a helper that comes later touches nothing")
    func withdrawBeforeRun() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let gate = Gate()
        gate.open()
        let (task, directory) = try Self.prefetch(tree.root) { gate.hold($0) }
        defer { _ = directory }
        task.withdraw()
        task.run()
        #expect(gate.entered == [])
        #expect((0..<3).allSatisfy { task.result($0) == nil })
    }

    @Test("left to run, the helper fetches down to the visitor's cursor and stops; withdraw then returns")
    func runsDownToTheCursor() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let (task, directory) = try Self.prefetch(tree.root, willStat: nil)
        defer { _ = directory }
        #expect(unlink(tree.root + "/d/b") == 0)
        task.run()
        #expect(task.result(2)?.code == StatPrefetch.fetchedOK)
        #expect(task.result(1)?.code == Errno.noSuchFile.rawValue)
        #expect(task.result(1)?.status == nil)
        // Entry 0 is the visitor's own (cursor 0): never fetched ahead.
        #expect(task.result(0) == nil)
        task.withdraw()
    }
}
