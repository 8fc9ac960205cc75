// Races against plan and apply: directories renamed or swapped for symlinks to outside the root, files replaced
// and created while the engine works. Nothing outside the root is ever touched; nothing unplanned is ever lost.
import Foundation
import Synchronization
import Testing
@testable import StoragePolicy
@testable import StoragePolicyPlan
import TreeFixture

@Suite("Races with concurrent writers", .serialized)
struct RaceTests {
    static let expiry = [rule("tmp-expiry", "tmp", expire(.hours(24)))]

    /// root/tmp/sub holds old files a.N; outside holds old files of the same names and outside-only.N.
    static func swapTree(_ s: SafetyRoot, files: Int = 20) {
        s.dir(s.root + "/tmp")
        s.dir(s.root + "/tmp/sub")
        for i in 0..<files {
            s.file(s.root + "/tmp/sub/a.\(i)")
            s.file(s.outside + "/a.\(i)", "SENTINEL")
            s.file(s.outside + "/outside-only.\(i)", "SENTINEL")
        }
        s.dir(s.outside + "/nested")
        s.file(s.outside + "/nested/deep", "SENTINEL")
        s.age(s.root + "/tmp/sub", hours: 48)
        s.age(s.root + "/tmp", hours: 48)
    }

    @Test("plan while tmp/sub flips between a directory and a symlink to outside: no plan names outside entries; applying them spares the outside")
    func planDuringSymlinkSwap() throws {
        let s = SafetyRoot()
        Self.swapTree(s)
        let outsideBefore = SafetyRoot.shape(s.outside)
        let sub = s.root + "/tmp/sub", parked = s.root + "/tmp/.parked"
        let outside = s.outside
        let mutator = Mutator { _ in
            if rename(sub, parked) == 0 {
                symlink(outside, sub)
                usleep(50)
                unlink(sub)
                rename(parked, sub)
            }
        }
        var plans: [Plan] = []
        for _ in 0..<30 { plans.append(try s.plan(Self.expiry, threads: 2)) }
        for plan in plans.prefix(10) { _ = try s.apply(plan) }
        let rounds = mutator.stop()
        #expect(rounds > 10, "the mutator must have raced (\(rounds) rounds)")
        for plan in plans {
            #expect(!plan.actions.contains { $0.path.string.contains("outside-only") || $0.path.string.contains("nested") },
                    "a plan walked through the symlink: \(plan.lines)")
        }
        #expect(SafetyRoot.shape(s.outside) == outsideBefore, "the outside folder changed")
    }

    @Test("a directory swapped mid-walk for a symlink to outside: the walk stays in the real directory and apply never follows")
    func swapMidWalk() throws {
        let s = SafetyRoot()
        Self.swapTree(s, files: 5)
        let outsideBefore = SafetyRoot.shape(s.outside)
        let sub = s.root + "/tmp/sub", moved = s.scratch + "/moved-sub", outside = s.outside
        let swapped = Atomic<Bool>(false)
        let plan = try s.plan(Self.expiry, threads: 1) { p in
            if p.string.hasPrefix("tmp/sub/"), !swapped.exchange(true, ordering: .relaxed) {
                rename(sub, moved)
                symlink(outside, sub)
            }
        }
        let didSwap = swapped.load(ordering: .relaxed)
        #expect(didSwap)
        #expect(!plan.actions.contains { $0.path.string.contains("outside-only") })
        let report = try s.apply(plan)
        #expect(report.counts[.delete] <= 1, "only tmp (whole) or nothing: \(report.items.map(\.outcome))")
        #expect(SafetyRoot.shape(s.outside) == outsideBefore, "the outside folder changed")
        // The symlink itself may go (it is an old entry of tmp), never what it points to.
        #expect(s.contents(s.outside + "/a.0") == "SENTINEL")
    }

    @Test("apply while tmp/sub flips to a symlink to outside: planned files go or stay, the outside never changes")
    func applyDuringSymlinkSwap() throws {
        for round in 0..<8 {
            let s = SafetyRoot()
            Self.swapTree(s)
            s.file(s.root + "/tmp/sub/keep", "fresh", ageHours: 1)
            let outsideBefore = SafetyRoot.shape(s.outside)
            let plan = try s.plan(Self.expiry)
            #expect(plan.actions.count == 20, "round \(round): \(plan.lines)")
            let sub = s.root + "/tmp/sub", parked = s.root + "/tmp/.parked", outside = s.outside
            let mutator = Mutator { _ in
                if rename(sub, parked) == 0 {
                    symlink(outside, sub)
                    usleep(20)
                    unlink(sub)
                    rename(parked, sub)
                }
            }
            _ = try s.apply(plan)
            mutator.stop()
            #expect(SafetyRoot.shape(s.outside) == outsideBefore, "round \(round): the outside folder changed")
            #expect(s.contents(s.root + "/tmp/sub/keep") == "fresh", "round \(round)")
        }
    }

    @Test("--all-or-nothing (every delete staged): a file replaced between its check and its deletion is kept, with its new contents")
    func replacedInTheWindow() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp")
        s.file(s.root + "/tmp/a")
        s.file(s.root + "/tmp/b")
        s.age(s.root + "/tmp", hours: 1)
        let plan = try s.plan(Self.expiry)
        #expect(plan.lines == ["delete tmp/a", "delete tmp/b"])
        let root = s.root
        let report = try s.apply(plan, allOrNothing: true) { p in
            guard p == path("tmp/a") else { return }
            let fd = open(root + "/tmp/.new", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = "NEW DATA".withCString { write(fd, $0, 8) }
            close(fd)
            rename(root + "/tmp/.new", root + "/tmp/a")
        }
        #expect(s.contents(s.root + "/tmp/a") == "NEW DATA", "the replacement was deleted")
        #expect(s.contents(s.root + "/tmp/b") == nil)
        if case .skipped(let why) = report.outcome("tmp/a") {
            #expect(why.contains("replaced"), "\(why)")
        } else {
            Issue.record("tmp/a must be reported skipped: \(String(describing: report.outcome("tmp/a")))")
        }
    }

    @Test("a roll-forward delete: a file replaced by a directory between its check and its unlink is kept and reported; replaced by a symlink to an outside file, only the symlink goes")
    func replacedInTheRollForwardWindow() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp")
        s.file(s.root + "/tmp/a")
        s.file(s.root + "/tmp/b")
        s.file(s.root + "/tmp/c")
        s.file(s.outside + "/target", "SENTINEL")
        s.age(s.root + "/tmp", hours: 1)
        let plan = try s.plan(Self.expiry)
        #expect(plan.lines == ["delete tmp/a", "delete tmp/b", "delete tmp/c"])
        let root = s.root, outside = s.outside
        let report = try s.apply(plan) { p in
            if p == path("tmp/a") {
                unlink(root + "/tmp/a")
                mkdir(root + "/tmp/a", 0o755)
                let fd = open(root + "/tmp/a/inside", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                _ = "NEW DATA".withCString { write(fd, $0, 8) }
                close(fd)
            } else if p == path("tmp/b") {
                unlink(root + "/tmp/b")
                symlink(outside + "/target", root + "/tmp/b")
            }
        }
        // unlinkat without AT_REMOVEDIR never removes a directory: the step is skipped, its contents kept.
        #expect(s.contents(s.root + "/tmp/a/inside") == "NEW DATA")
        #expect(report.outcome("tmp/a") == .skipped("replaced by a directory meanwhile; kept"))
        // unlinkat never follows a symlink: the link goes, what it points to stays.
        var status = stat()
        #expect(lstat(s.root + "/tmp/b", &status) != 0)
        #expect(s.contents(s.outside + "/target") == "SENTINEL")
        #expect(s.contents(s.root + "/tmp/c") == nil)
        #expect(report.outcome("tmp/c") == .done)
    }

    @Test("a file created inside a directory between its check and its deletion keeps the directory")
    func createdInTheWindow() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp")
        s.dir(s.root + "/tmp/old")
        s.file(s.root + "/tmp/old/x")
        s.age(s.root + "/tmp/old", hours: 48)
        s.age(s.root + "/tmp", hours: 1)
        let plan = try s.plan(Self.expiry)
        #expect(plan.lines == ["delete tmp/old"])
        let root = s.root
        let report = try s.apply(plan) { p in
            if p == path("tmp/old") { _ = FileManager.default.createFile(atPath: root + "/tmp/old/new-upload", contents: Data("UPLOAD".utf8)) }
        }
        #expect(s.contents(s.root + "/tmp/old/new-upload") == "UPLOAD", "a file written after the plan was deleted")
        if case .skipped = report.outcome("tmp/old") {} else {
            Issue.record("tmp/old must be reported skipped: \(String(describing: report.outcome("tmp/old")))")
        }
    }

    @Test("writers replacing and adding files during apply: every file written after the plan survives")
    func concurrentWriters() throws {
        for round in 0..<4 {
            let s = SafetyRoot()
            s.dir(s.root + "/tmp")
            for d in 0..<4 {
                s.dir(s.root + "/tmp/d\(d)")
                for i in 0..<40 { s.file(s.root + "/tmp/d\(d)/f\(i)") }
                s.age(s.root + "/tmp/d\(d)", hours: 48)
            }
            s.age(s.root + "/tmp", hours: 1)
            let plan = try s.plan(Self.expiry)
            #expect(plan.lines == (0..<4).map { "delete tmp/d\($0)" }, "round \(round)")
            let root = s.root
            let written = Mutex<[String]>([])
            let mutator = Mutator { n in
                let d = n % 4, i = (n / 4) % 40
                let target = root + "/tmp/d\(d)/" + (n % 2 == 0 ? "f\(i)" : "new\(n)")
                let temp = root + "/tmp/d\(d)/.w\(n)"
                let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard fd >= 0 else { return }
                let text = "W\(n)"
                _ = text.withCString { write(fd, $0, strlen($0)) }
                close(fd)
                if rename(temp, target) == 0 { written.withLock { $0.append(target + "\t" + text) } } else { unlink(temp) }
            }
            _ = try s.apply(plan)
            mutator.stop()
            let all = written.withLock { $0 }
            // The last write to each path is what must be there.
            var latest: [String: String] = [:]
            for line in all {
                let parts = line.split(separator: "\t").map(String.init)
                latest[parts[0]] = parts[1]
            }
            var lost: [String] = []
            for (p, text) in latest where s.contents(p) != text { lost.append(p) }
            #expect(lost.isEmpty, "round \(round): \(lost.count) of \(latest.count) files written after the plan were lost: \(lost.prefix(5))")
        }
    }
}
