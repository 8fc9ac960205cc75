// The tree and plan the crash and fault tests share: every kind of action apply makes (deletes of files,
// nested directories and whole trees, renames, trash moves, mkdir, setxattr, cache tags), all of them ones
// the test policy makes (apply refuses any other).
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// One copy of the scenario: its root, plan file and the outside file a hard link points at.
struct CrashScenario {
    let scratch: ScratchDirectory
    let root: String
    let planFile: String
    let policy: String
    let outside: String

    /// What names the plan's judge on the command line (the record lookup is then skipped: fault sweeps aim
    /// at the apply itself).
    var judged: [String] { ["--policy", policy, "--root", root] }

    static let tree: [TreeNode] = [
        .dir("tmp", ageHours: 48),
        .file("tmp/old1", size: 100), .file("tmp/old2", size: 2000), .file("tmp/old3", size: 0),
        .file("tmp/fresh", size: 10, ageHours: 1),
        .dir("tmp/sub", ageHours: 48), .dir("tmp/sub/deep", ageHours: 48),
        .file("tmp/sub/deep/x", size: 5), .file("tmp/sub/y", size: 6),
        .dir("tmp/tree", ageHours: 48), .dir("tmp/tree/a", ageHours: 48), .dir("tmp/tree/a/b", ageHours: 48),
        .file("tmp/tree/a/b/c", size: 7), .file("tmp/tree/a/d", size: 8),
        .symlink("tmp/link", target: "/etc"),
        .dir("docs"), .file("docs/UP.TXT", size: 3), .file("docs/Notes.sqlite", size: 4, xattrs: ["user.keep": "yes"]),
        .file("docs/private.db", size: 5),
        .dir("docs/.Trash"), .dir("docs/.Trash/files"), .dir("docs/.Trash/info"),
        .dir("lib", xattrs: ["user.test": "1"]),
    ]

    static let actions: [PlannedAction] = [
        .delete("tmp/old1"), .delete("tmp/old2"), .delete("tmp/old3"),
        .delete("tmp/sub/deep/x"), .delete("tmp/sub/deep"), .delete("tmp/sub/y"), .delete("tmp/sub"),
        .delete("tmp/tree"), .delete("tmp/link"), .delete("tmp/hardlink"),
        .rename("docs/UP.TXT", to: "docs/up.txt"),
        .trash("docs/Notes.sqlite", folder: "docs/.Trash"),
        .trash("docs/private.db", folder: "docs/.Trash"),
        .mkdir("app"), .mkdir("cache"), .mkdir("cache/sub"),
        .setxattr("cache", name: "user.xdg.robots.backup", value: "false"),
        .writeTag("cache"),
        .setxattr("lib", name: "user.xdg.robots.backup", value: "false"),
    ]

    /// Every copy lives under a path of the same length: `.trashinfo` files record it, and their size is compared.
    init(tmpfsKilobytes: Int? = nil) throws {
        let scratch = ScratchDirectory("crash")
        self.scratch = scratch
        // The root and the outside folder share one filesystem (a hard link needs that), a tmpfs when asked.
        let base = try tmpfsKilobytes.map { try scratch.tmpfs("fs", kilobytes: $0) } ?? scratch.sub("fs")
        root = base + "/root"
        mkdir(root, 0o755)
        let outsideDirectory = base + "/outside"
        mkdir(outsideDirectory, 0o755)
        outside = outsideDirectory + "/file"
        try buildTree(at: outsideDirectory, [.file("file", size: 42)])
        try buildTree(at: root, CrashScenario.tree + [.hardlink("tmp/hardlink", target: outside)])
        policy = scratch.path + "/policy.yaml"
        try writePolicy(policy)
        planFile = scratch.path + "/plan.json"
        try makePlan(root: root, policyFile: policy, CrashScenario.actions, writeTo: planFile)
    }

    func manifest() throws -> [String] { try EndToEndTests.manifest(of: root) }

    /// The outside file is never touched: same content, one link fewer at most.
    func expectOutsideUntouched(sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: outside))
        #expect(data.count == 42, sourceLocation: sourceLocation)
        #expect(data.allSatisfy { $0 == 0x61 }, sourceLocation: sourceLocation)
    }

    /// Nothing is left in staging once a transaction is closed (committed and purged, or rolled back).
    func expectStagingEmpty(sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let staging = root + "/.policyctl/staging"
        let left = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        #expect(left.isEmpty, "staging still holds \(left)", sourceLocation: sourceLocation)
    }
}

/// The before and after manifests and the journal of an uninterrupted run, computed once.
struct CrashReference {
    let before: [String]
    let after: [String]
    /// Journal records of a clean run, and the 1-based index of its commit record.
    let records: Int
    let commitRecord: Int

    static func make() throws -> CrashReference {
        let s = try CrashScenario()
        let before = try s.manifest()
        let run = try policyctl(["apply", s.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        let after = try s.manifest()
        let lines = try journalLines(s.root)
        let commit = (lines.firstIndex { $0.contains(#""type":"commit""#) } ?? -1) + 1
        return CrashReference(before: before, after: after, records: lines.count, commitRecord: commit)
    }
}

// MARK: The exact state after a rollback

/// The roll-forward deletes a rolled-back transaction still finishes: every `unlink` intent in the journal,
/// except those of an action with a `skip` record (it was not carried out) and those a `kept` record names (the
/// finishing unlink failed on that entry). Read from the journal after the rollback or recovery.
func rolledForwardDeletes(_ root: String) throws -> Set<String> {
    var unlinks: [String: (action: Int, path: String)] = [:]
    var skipped: Set<String> = []
    var kept: Set<String> = []
    // No journal: nothing was ever begun, so nothing was deleted.
    guard FileManager.default.fileExists(atPath: root + "/.policyctl/journal.jsonl") else { return [] }
    for line in try journalLines(root) {
        guard let frame = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let record = frame["rec"] as? [String: Any], let tx = record["tx"] as? String,
              let type = record["type"] as? String else { continue }
        switch type {
        case "intent" where record["change"] as? String == "unlink":
            // As the manifest prints it: the exact bytes (base64 when not UTF-8), escaped, then the type.
            let bytes = (record["pathBase64"] as? String).flatMap { Data(base64Encoded: $0) }.map { Array($0) }
                ?? Array(((record["path"] as? String) ?? "").utf8)
            if let op = record["op"] as? Int, let action = record["action"] as? Int, let path = RelativePath(bytes),
               let type = record["entryType"] as? String {
                unlinks["\(tx) \(op)"] = (action, path.escaped + " " + type)
            }
        case "skip":
            if let action = record["action"] as? Int { skipped.insert("\(tx) \(action)") }
        case "kept":
            if let op = record["op"] as? Int { kept.insert("\(tx) \(op)") }
        default:
            break
        }
    }
    return Set(unlinks.compactMap { key, value -> String? in
        let tx = String(key.split(separator: " ")[0])
        return skipped.contains("\(tx) \(value.action)") || kept.contains(key) ? nil : value.path
    })
}

/// The rule after an uncommitted transaction is rolled back (by the run itself or by recovery): exactly the
/// before-manifest, except that each roll-forward delete whose intent was durable is done (see Docs/journal.md):
/// after a crash, every one not recorded as skipped; after a run that failed, those it made.
func rolledBackManifest(before: [String], root: String) throws -> [String] {
    let finished = try rolledForwardDeletes(root)
    // A manifest line is `PATH TYPE ...`; a deleted entry is matched by its escaped path and its type.
    return before.filter { line in !finished.contains { line == $0 || line.hasPrefix($0 + " ") } }
}

extension CrashScenario {
    /// The non-directory entries the plan deletes: these are deleted roll-forward (directories are staged).
    static let rollForwardDeletes: Set<String> = [
        "tmp/old1 file", "tmp/old2 file", "tmp/old3 file", "tmp/sub/deep/x file", "tmp/sub/y file", "tmp/link symlink",
        "tmp/hardlink file",
    ]

    /// The manifest a rollback of this scenario must leave, by the rule above.
    func rolledBack(_ ref: CrashReference) throws -> [String] { try rolledBackManifest(before: ref.before, root: root) }
}
