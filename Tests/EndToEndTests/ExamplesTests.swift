// The examples in Examples/ run in CI: each binary on a generated tree, its output and the tree afterwards
// checked exactly; a custom rule's apply is rolled back by a fault and recovered after a crash.
import Foundation
import Testing
import StoragePolicy
import TreeFixture

@Suite("Examples") struct ExamplesTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// An app container with work for most of the app-sandbox policy's rules.
    static func container() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old.dat", age: .hours(30))
                File("fresh.dat", age: .hours(2))
            }
            Dir("Documents") {
                Dir("UserFiles") {
                    File("Notes.TXT", age: .days(2))
                    File("photo.jpg.download", age: .hours(3))
                    File("inflight.tmp", age: .minutes(10))
                    File("db.sqlite", age: .days(1))
                }
            }
        }
    }

    /// The tree the custom-rule example works on: empty files old and new, images with and without thumbnails.
    static func mediaTree() throws -> Tree {
        try Tree {
            Dir("tmp") { File("old.dat", age: .days(3)) }
            Dir("Documents") {
                File("empty.log", age: .hours(2), size: 0)
                File("fresh-empty.log", age: .minutes(5), size: 0)
                File("notes.txt", age: .hours(2), size: 10)
                Dir("a", age: .hours(3)) { File("empty2.log", age: .hours(2), size: 0) }
            }
            Dir("Media") {
                File("a.jpg"); File("a.thumb.jpg"); File("b.png")
            }
        }
    }

    @Test("LaunchCleanup applies the bundled app-sandbox policy and says what it did") func launchCleanup() throws {
        let tree = try Self.container()
        defer { tree.remove() }
        let r = try ExampleBinary.run("LaunchCleanup", [tree.root])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.lines
        #expect(lines.first == "launch cleanup of \(tree.root) with policy 'ios-app-sandbox'")
        #expect(Array(lines.dropFirst().dropLast()) == EXPECTED_LAUNCH)
        #expect(lines.last?.hasPrefix("applied 15 changes, freed ") == true)
        #expect(ExampleBinary.contents(tree.root) == EXPECTED_TREE)

        // A second launch finds nothing to do but the audit-only finding.
        let again = try ExampleBinary.run("LaunchCleanup", [tree.root])
        #expect(again.status == 0)
        #expect(Array(again.lines.dropFirst()) == [
            "violation no-private-data-in-user-files: Documents/UserFiles/db.sqlite: forbidden (matches '**/*.sqlite')",
            "applied 0 changes, freed 0 bytes",
        ])
    }

    @Test("LaunchCleanup reads a policy file given as the second argument; an invalid one exits 65 with file:line:col") func launchCleanupPolicyFile() throws {
        let tree = try Self.container()
        defer { tree.remove() }
        let r = try ExampleBinary.run("LaunchCleanup", [tree.root, Self.packageRoot + "/Policies/ios-app-sandbox.yaml"])
        #expect(r.status == 0)
        #expect(r.lines.contains("delete tmp/old.dat (tmp-expiry)"))

        let bad = tree.root + "/../bad-\(UUID().uuidString).yaml"
        try "version: 1\nname: bad\nrules:\n  - name: a\n    path: ../up\n    expire: { after: 1h }\n".write(toFile: bad, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let refused = try ExampleBinary.run("LaunchCleanup", [tree.root, bad])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("\(bad):5:11: "))
        #expect(refused.stdout.isEmpty)
    }

    @Test("the policy LaunchCleanup ships (the library's bundled copy) is byte-for-byte Policies/ios-app-sandbox.yaml") func bundledPolicy() throws {
        let file = try String(contentsOfFile: Self.packageRoot + "/Policies/ios-app-sandbox.yaml", encoding: .utf8)
        #expect(BundledPolicies.named("ios-app-sandbox")?.fileContents == file)
    }

    @Test("AppDay: the launch look counts what is pending, the background task applies it with progress from the event stream")
    func appDay() throws {
        let tree = try Self.container()
        defer { tree.remove() }
        let r = try ExampleBinary.run("AppDay", [tree.root])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.first?.hasPrefix("launch: ") == true && r.lines.first?.hasSuffix(" bytes to free") == true, "\(r.lines)")
        #expect(r.lines.contains { $0.hasPrefix("background: ") && $0.contains(" of ") && $0.hasSuffix(" steps") }, "\(r.lines)")
        #expect(r.lines.last?.hasPrefix("background: committed ") == true, "\(r.lines)")
        let names = Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) })
        #expect(!names.contains("tmp/old.dat") && names.contains("tmp/fresh.dat"))
        #expect(names.contains("Documents/UserFiles/inflight.tmp"))
    }

    @Test("AppDay: a background task that expires at once cancels the apply; nothing changed, nothing to recover")
    func appDayExpired() throws {
        let tree = try Self.container()
        defer { tree.remove() }
        let before = Manifest.take(tree.root).filter { !String(decoding: $0.path, as: UTF8.self).hasPrefix(".policyctl") }
        let r = try ExampleBinary.run("AppDay", [tree.root, "--expire-after", "0"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.last == "background: expired: cancelled, nothing left half done", "\(r.lines)")
        let after = Manifest.take(tree.root).filter { !String(decoding: $0.path, as: UTF8.self).hasPrefix(".policyctl") }
        #expect(after.map(\.path) == before.map(\.path))
        let engine = try StorageEngine(yaml: BundledPolicies.named("ios-app-sandbox")!.fileContents, root: tree.root)
        #expect(try engine.recover().nothingToDo)
    }

    @Test("CustomRuleExample prints the plan of its DSL policy with custom rules and changes nothing") func customRulePlan() throws {
        let tree = try Self.mediaTree()
        defer { tree.remove() }
        let before = ExampleBinary.contents(tree.root)
        let r = try ExampleBinary.run("CustomRuleExample", [tree.root])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("""

            zero-byte-files
              - delete    Documents/a/empty2.log  0 B  zero bytes, mtime older than 1h
              - delete    Documents/empty.log  0 B  zero bytes, mtime older than 1h

            """))
        #expect(r.stdout.contains("tmp-expiry\n  - delete    tmp/old.dat  "))
        #expect(r.stdout.contains("warning images-need-thumbnails  Media/b.png: no thumbnail 'b.thumb.jpg'"))
        #expect(!r.stdout.contains("a.jpg"))
        #expect(r.stdout.contains("Plan: 3 to delete"))
        #expect(ExampleBinary.contents(tree.root) == before)
    }

    @Test("a custom rule's deletes when a later one fails: the run rolls back through the journal; the deletes made stay made (roll-forward), the failed one is kept")
    func customRuleRollback() throws {
        let tree = try Self.mediaTree()
        defer { tree.remove() }
        let before = ExampleBinary.contents(tree.root)
        // Deletes run deepest path first: tmp/old.dat, Documents/empty.log (the custom rule's), then the third fails.
        let r = try ExampleBinary.run("CustomRuleExample", [tree.root, "--apply"], environment: ["POLICYCTL_FAULTS": "unlink:3:EIO"])
        #expect(r.status == 3)
        #expect(r.stdout.contains("apply failed and was rolled back (transaction "))
        #expect(r.stdout.contains("0 change(s) undone, 0 kept"))
        #expect(r.stdout.contains("Documents/a/empty2.log: Input/output error (EIO)"))
        #expect(ExampleBinary.contents(tree.root) == before.filter { !$0.hasPrefix("tmp/old.dat ") && $0 != "Documents/empty.log 0" })
        let journal = try StorageEngine(policy: Policy(name: "any"), root: tree.root).journal()
        // The deletes made stayed made: the journal says so (issue 32), not plain "rolled back".
        #expect(journal.map(\.outcome) == [.partiallyRolledBack])
        #expect(journal.first?.policy == "custom-rule-example")
    }

    @Test("a custom rule's deletes interrupted by a crash: recover finishes the roll-forward delete left") func customRuleCrash() throws {
        let tree = try Self.mediaTree()
        defer { tree.remove() }
        let before = ExampleBinary.contents(tree.root)
        let r = try ExampleBinary.run("CustomRuleExample", [tree.root, "--apply"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "2"])
        #expect(r.signaled && r.status == SIGKILL)
        #expect(!ExampleBinary.contents(tree.root).contains("Documents/empty.log 0"))
        let engine = StorageEngine(policy: Policy(name: "any"), root: tree.root)
        let recovery = try engine.recover()
        #expect(recovery.entries.count == 1)
        #expect(recovery.entries.first?.undone == 0)
        #expect(recovery.entries.first?.finished == 1)
        #expect(ExampleBinary.contents(tree.root) == before.filter { !["Documents/empty.log 0", "Documents/a/empty2.log 0"].contains($0) && !$0.hasPrefix("tmp/old.dat ") })
        #expect(try engine.recover().nothingToDo)
    }
}

/// What LaunchCleanup prints between its first and last lines for `ExamplesTests.container()`.
private let EXPECTED_LAUNCH = [
    "mkdir Documents/ExportTemp (layout)",
    "mkdir Documents/UserFiles/Download (layout)",
    "mkdir Documents/UserFiles/Import (layout)",
    "mkdir Library (layout)",
    "mkdir Library/Application Support (layout)",
    "mkdir Library/Application Support/AppData (layout)",
    "mkdir Library/Caches (layout)",
    "mkdir Library/Caches/Downloading (layout)",
    "mkdir Library/Caches/Thumbnails (layout)",
    "setxattr Library/Caches/Downloading (layout)",
    "setxattr Library/Caches/Thumbnails (layout)",
    "write-tag Library/Caches/Thumbnails (layout)",
    "rename Documents/UserFiles/Notes.TXT -> Documents/UserFiles/notes.txt (lowercase-names)",
    "delete tmp/old.dat (tmp-expiry)",
    "delete Documents/UserFiles/photo.jpg.download (download-residue)",
    "violation no-private-data-in-user-files: Documents/UserFiles/db.sqlite: forbidden (matches '**/*.sqlite')",
]

/// The container after LaunchCleanup: layout made, residue and expired scratch gone, the in-flight transfer kept.
private let EXPECTED_TREE = [
    "Documents/", "Documents/ExportTemp/", "Documents/UserFiles/", "Documents/UserFiles/Download/",
    "Documents/UserFiles/Import/", "Documents/UserFiles/db.sqlite 100", "Documents/UserFiles/inflight.tmp 100",
    "Documents/UserFiles/notes.txt 100", "Library/", "Library/Application Support/",
    "Library/Application Support/AppData/", "Library/Caches/", "Library/Caches/Downloading/",
    "Library/Caches/Thumbnails/", "Library/Caches/Thumbnails/CACHEDIR.TAG 183", "tmp/", "tmp/fresh.dat 100",
]
