// Examples/OutsidePackage is a package of its own with a path dependency on this one, as an app's would be:
// it builds in Swift 6 mode against the StoragePolicy product's public API alone (SwiftPM gives no `package`
// access and no @testable across packages), passes the library URLs only, and its executable plans and applies
// a container, cancels a plan of a 1,000,000-entry tree 30 ms after it started, and cancels an apply (issue 26's
// acceptance). This test builds it with the toolchain on PATH into .build/outside-package (kept, so a second run
// is incremental) and asserts what it prints, line by line.
import Foundation
import Testing
import TreeFixture

@Suite("the outside package", .serialized) struct OutsidePackageTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]
    static let scratch = packageRoot + "/.build/outside-package"

    /// swift for the build: this process's PATH, else the usual toolchain places.
    static let swift: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/swift" } + ["/opt/swift/usr/bin/swift", "/usr/bin/swift"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// The large tree's size: 1,000,000 entries, on tmpfs where there is one (it builds in seconds there).
    static let entries = 1_000_000

    @Test("builds against the public API with URLs only; plans and applies a container; a cancelled plan of 1,000,000 entries throws CancellationError within 300 ms; a cancelled apply leaves the tree as recover would",
          .enabled(if: swift != nil), .timeLimit(.minutes(30)))
    func outsidePackage() throws {
        let clock = ContinuousClock()
        let building = clock.now
        let build = try ChildProcess.run(try #require(Self.swift), [
            "build", "--package-path", Self.packageRoot + "/Examples/OutsidePackage", "--scratch-path", Self.scratch,
        ])
        // A deserialization abort here is the toolchain's stale incremental build across modules: remove
        // .build/outside-package and run again.
        #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        #expect(!build.stdout.contains("warning:") && !build.stderr.contains("warning:"), "\(build.stdout)\(build.stderr)")
        print("outside package built in \(clock.now - building)")
        guard build.status == 0 else { return }

        let work = TestScratch.path("outside")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let shm = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : work
        // A fresh name in a folder anyone can write: OutsideApp makes it (0700) and refuses one that exists; what
        // is left after a failed run is removed only when it is the folder this uid made, never a stranger's.
        let big = shm + "/policyctl-outside-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        defer {
            var st = stat()
            if lstat(big, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == geteuid() {
                try? FileManager.default.removeItem(atPath: big)
            }
        }

        let running = clock.now
        let r = try ChildProcess.run(Self.scratch + "/debug/OutsideApp", [work, big, String(Self.entries)])
        print("outside package ran in \(clock.now - running)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)

        #expect(lines.filter { $0.hasPrefix("container: ") } == EXPECTED_CONTAINER, "\(lines)")

        let planCancel = lines.filter { $0.hasPrefix("plan-cancel: ") }
        #expect(planCancel.count == 3, "\(planCancel)")
        #expect(planCancel.first?.hasPrefix("plan-cancel: built 1000000 entries in ") == true, "\(planCancel)")
        let cancelled = try #require(planCancel.dropFirst().first)
        // plan-cancel: cancelled A ms after start, CancellationError B ms after the cancel, C of 1000000 entries scanned; the walk stopped
        let numbers = cancelled.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count == 4, "\(cancelled)")
        if numbers.count == 4 {
            #expect(numbers[0] >= 30, "cancelled \(numbers[0]) ms after start: \(cancelled)")
            #expect(numbers[1] < 300, "CancellationError \(numbers[1]) ms after the cancel: \(cancelled)")
            #expect(numbers[2] < numbers[3] && numbers[3] == 1_000_000, "\(cancelled)")
        }
        #expect(cancelled.hasSuffix(" of 1000000 entries scanned; the walk stopped"), "\(cancelled)")
        #expect(planCancel.last?.hasPrefix("plan-cancel: removed them in ") == true, "\(planCancel)")

        #expect(lines.filter { $0.hasPrefix("apply-cancel: ") } == EXPECTED_APPLY_CANCEL, "\(lines)")
        #expect(lines.last == "ok")
        #expect(!FileManager.default.fileExists(atPath: big), "the large tree was removed")

        // An async call's handler that mutates a captured var does not compile: type-checked against the modules
        // just built, exactly the two errors the file's comments name (a missing module would be another error).
        let swiftc = URL(fileURLWithPath: try #require(Self.swift)).deletingLastPathComponent().appendingPathComponent("swiftc").path
        let modules = Self.scratch + "/debug"
        let file = Self.packageRoot + "/Examples/OutsidePackage/CompileFailures/CapturedVar.swift"
        let typecheck = try ChildProcess.run(swiftc, [
            "-typecheck", "-swift-version", "6", "-I", modules + "/Modules",
            "-Xcc", "-fmodule-map-file=" + modules + "/CPosix.build/module.modulemap",
            "-Xcc", "-fmodule-map-file=" + Self.packageRoot + "/Sources/CYAML/module.modulemap", file,
        ])
        #expect(typecheck.status == 1, "\(typecheck.stderr)")
        let errors = typecheck.stderr.split(separator: "\n").filter { $0.hasPrefix(file + ":") }
        #expect(errors == [
            "\(file):10:39: error: mutation of captured var 'steps' in concurrently-executing code [#SendableClosureCaptures]",
            "\(file):11:48: error: mutation of captured var 'steps' in concurrently-executing code [#SendableClosureCaptures]",
        ], "\(typecheck.stderr)")
    }
}

/// What the container part prints: the bundled ios-app-sandbox policy's plan of a small container, the apply,
/// the tree after it (layout made, expired scratch and download residue gone, the fresh and in-flight files kept).
private let EXPECTED_CONTAINER = [
    "container: plan: mkdir Documents/ExportTemp (layout)",
    "container: plan: mkdir Documents/UserFiles/Download (layout)",
    "container: plan: mkdir Documents/UserFiles/Import (layout)",
    "container: plan: rename Documents/UserFiles/Notes.TXT -> Documents/UserFiles/notes.txt (lowercase-names)",
    "container: plan: mkdir Library (layout)",
    "container: plan: mkdir Library/Application Support (layout)",
    "container: plan: mkdir Library/Application Support/AppData (layout)",
    "container: plan: mkdir Library/Caches (layout)",
    "container: plan: mkdir Library/Caches/Downloading (layout)",
    "container: plan: setxattr Library/Caches/Downloading (layout)",
    "container: plan: mkdir Library/Caches/Thumbnails (layout)",
    "container: plan: setxattr Library/Caches/Thumbnails (layout)",
    "container: plan: write-tag Library/Caches/Thumbnails (layout)",
    "container: plan: delete tmp/old.dat (tmp-expiry)",
    // The download in flight (engine.inUse), 3 hours old where the residue rule deletes after 1 hour.
    "container: kept: Documents/UserFiles/photo.jpg.download: in use: the app says it is busy",
    "container: applied ActionCounts(delete: 1, rename: 1, mkdir: 9, setxattr: 2, write-tag: 1)",
    "container: tree: Documents/",
    "container: tree: Documents/ExportTemp/",
    "container: tree: Documents/UserFiles/",
    "container: tree: Documents/UserFiles/Download/",
    "container: tree: Documents/UserFiles/Import/",
    "container: tree: Documents/UserFiles/inflight.tmp",
    "container: tree: Documents/UserFiles/notes.txt",
    "container: tree: Documents/UserFiles/photo.jpg.download",
    "container: tree: Library/",
    "container: tree: Library/Application Support/",
    "container: tree: Library/Application Support/AppData/",
    "container: tree: Library/Caches/",
    "container: tree: Library/Caches/Downloading/",
    "container: tree: Library/Caches/Thumbnails/",
    "container: tree: Library/Caches/Thumbnails/CACHEDIR.TAG",
    "container: tree: tmp/",
    "container: tree: tmp/fresh.dat",
    "container: a second plan has nothing to do",
]

/// What the apply-cancel part prints.
/// 3 steps before the deletes (a mkdir, an attribute, a rename), each a group of its own (a group never spans two
/// phases), so groups double from 256 to 2,048 and the first group of deletes ends at step 2,051; it holds the 10
/// folders (deepest first, in reverse order: tmp/z* come first) and 2,038 files.
private let EXPECTED_APPLY_CANCEL = [
    "apply-cancel: planned 2513 actions, 3 of them not deletes",
    "apply-cancel: cancelled after 2051 of 2513 steps: CancellationError; 2038 file deletes stayed made, the other 475 actions undone or never made (a new plan has them all); journal: partially rolled back (cancelled); recover: nothing to do",
]
