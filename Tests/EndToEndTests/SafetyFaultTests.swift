// Fault injection through the built binary: the Nth call of every syscall kind fails with each errno, during
// apply, recover and plan. Once recovery has run the tree is exactly rolled back (before, but for the roll-forward
// deletes whose intents were durable, which are done), or after except for the entries reported as skipped (a
// per-entry errno, a vanished entry), which are exactly as before; errors name path and errno.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// The errnos the sweep injects, in turn.
let injectedErrnos = ["EIO", "ENOSPC", "EACCES", "ENOENT", "EXDEV", "EMFILE"]

/// N values to try: every one up to 24, then sparser (a quarter further each time) up to `limit`.
func sweepPoints(limit: Int) -> [Int] {
    var points: [Int] = []
    var n = 1
    while n <= limit {
        points.append(n)
        n += n < 24 ? 1 : n / 4
    }
    return points
}

/// A failure line names a path (relative to the root, `.` for the root itself, or absolute) and the errno:
/// `tmp/old1: Input/output error (EIO) [renameat]`, also inside a longer sentence.
func namesPathAndErrno(_ text: String, errno: String) -> Bool {
    text.split(separator: "\n").contains { line in
        guard let r = line.range(of: "(\(errno))") else { return false }
        // `<path>: <strerror> (ERRNO)`: the word before the last ": " ahead of the errno is the path.
        let head = line[..<r.lowerBound]
        guard let colon = head.range(of: ": ", options: .backwards) else { return false }
        let path = head[..<colon.lowerBound].split(separator: " ").last ?? ""
        return !path.isEmpty && !path.hasSuffix(":")
    }
}

@Suite("Fault injection sweep (every syscall kind, every errno)")
struct SafetyFaultTests {
    @Test("apply with the Nth call of each kind failing: exit 0, 1, 3 or 74; after recover exactly rolled back (before but for the durable roll-forward deletes), or after except for the items reported as skipped, which are exactly as before",
          arguments: SystemCall.allCases)
    func applySweep(kind: SystemCall) throws {
        let ref = try CrashReference.make()
        var failed = 0
        var isolated = 0
        var cleanAfter = 0
        for n in sweepPoints(limit: 400) {
            let errno = injectedErrnos[(n - 1) % injectedErrnos.count]
            let s = try CrashScenario()
            let label = "\(kind.rawValue):\(n):\(errno)"
            let run = try policyctl(["apply", s.planFile, "--yes", "--log-format", "json"] + s.judged, environment: ["POLICYCTL_FAULTS": label])
            #expect(run.signal == nil, "\(label): the process died\n\(run)")
            #expect([0, 1, 3, 74].contains(run.status), "\(label): \(run)")
            let skipped = SkippedItem.parse(run.stdout)
            if run.status != 0 {
                failed += 1
                #expect(namesPathAndErrno(run.stderr, errno: errno), "\(label): the error must name a path and (\(errno))\n\(run)")
            }
            if run.status == 1 {
                // An error on one entry: that entry is skipped with the injected errno, the rest committed.
                isolated += 1
                #expect(skipped.contains { $0.errno == errno }, "\(label): exit 1 names the skipped entry's errno\n\(run)")
            } else {
                #expect(!skipped.contains { $0.errno != nil }, "\(label): an entry skipped for an error means exit 1\n\(run)")
            }
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "\(label): \(recover)")
            let m = try s.manifest()
            if run.status == 0 || run.status == 1 {
                // Committed: the after-manifest, except that every skipped item is exactly as it was before.
                let (expected, optional) = SkippedItem.expectedManifest(before: ref.before, after: ref.after, skipped: skipped)
                let actual = m.filter { !optional.contains(manifestPath($0)) }
                #expect(actual == expected, "\(label): expected after except the skipped items \(skipped.map(\.path)): \(Set(actual).symmetricDifference(expected).sorted())\n\(run)")
            } else {
                // Rolled back, or failed before changing anything: exactly before, but for the roll-forward deletes.
                let expected = try s.rolledBack(ref)
                let finished = try rolledForwardDeletes(s.root).sorted()
                #expect(m == expected, "\(label): a rolled-back apply must leave exactly before but for the roll-forward deletes \(finished): \(Set(m).symmetricDifference(expected).sorted())\n\(run)")
            }
            if m == ref.after && run.status == 0 { cleanAfter += 1 } else { cleanAfter = 0 }
            try s.expectStagingEmpty()
            try s.expectOutsideUntouched()
            // Past the last call of this kind three runs in a row complete untouched: stop.
            if cleanAfter >= 3 { break }
        }
        // removexattr only runs in rollbacks: a clean apply may never fail on it. unlink runs in roll-forward
        // deletes (a per-entry errno skips that file) and in the purge after the commit (finished by recover).
        if kind != .removexattr {
            #expect(failed >= 1, "some injected \(kind.rawValue) failure must surface")
        }
        // EACCES and EXDEV on a call that renames, creates or opens an entry concern that entry alone.
        if [.rename, .mkdir].contains(kind) {
            #expect(isolated >= 1, "an injected per-entry \(kind.rawValue) error must skip that entry (exit 1), not roll back")
        }
    }

    @Test("recover with the Nth call of each kind failing: recover again (no faults) converges to rolled back (before but for the finished roll-forward deletes)",
          arguments: SystemCall.allCases)
    func recoverSweep(kind: SystemCall) throws {
        let ref = try CrashReference.make()
        var cleanRuns = 0
        for n in sweepPoints(limit: 120) {
            // No ENOENT here: recovery decides what to undo by looking, and a real ENOENT means "not there".
            let errnos = injectedErrnos.filter { $0 != "ENOENT" }
            let errno = errnos[(n - 1) % errnos.count]
            let s = try CrashScenario()
            let label = "\(kind.rawValue):\(n):\(errno)"
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "8"])
            #expect(run.signal == SIGKILL)
            let faulty = try policyctl(["recover", "--root", s.root], environment: ["POLICYCTL_FAULTS": label])
            #expect(faulty.signal == nil, "\(label): \(faulty)")
            #expect(faulty.status == 0 || faulty.status == 74, "\(label): \(faulty)")
            if faulty.status != 0 {
                #expect(namesPathAndErrno(faulty.stderr, errno: errno), "\(label): \(faulty)")
                cleanRuns = 0
            } else {
                cleanRuns += 1
            }
            let again = try policyctl(["recover", "--root", s.root])
            #expect(again.status == 0, "\(label): \(again)")
            let m = try s.manifest()
            let expected = try s.rolledBack(ref)
            #expect(m == expected, "\(label): recovery after a failed recovery must roll back exactly: \(Set(m).symmetricDifference(expected).sorted())\nfirst: \(faulty)\nagain: \(again)")
            try s.expectStagingEmpty()
            if cleanRuns >= 3 { break }
        }
    }

    @Test("plan with the Nth call of a kind failing: a located error (74) or skipped entries with reasons; nothing changes",
          arguments: [SystemCall.open, .stat, .readdir, .read])
    func planSweep(kind: SystemCall) throws {
        let s = try CrashScenario()
        let policy = s.scratch.path + "/expire.yaml"
        try writePolicy(policy, """
            version: 1
            name: test-policy
            rules:
              - name: tmp-expiry
                path: tmp
                expire: { after: 24h }
              - name: lower
                path: docs
                naming: { case: lower }
            """)
        let before = try s.manifest()
        let clean = try policyctl(["plan", "--policy", policy, "--root", s.root, "--format", "json"])
        #expect(clean.status == 0, "\(clean)")
        var surfaced = 0
        for n in sweepPoints(limit: 60) {
            let errno = injectedErrnos[(n - 1) % injectedErrnos.count]
            let label = "\(kind.rawValue):\(n):\(errno)"
            let run = try policyctl(["plan", "--policy", policy, "--root", s.root, "--format", "json"],
                                    environment: ["POLICYCTL_FAULTS": label])
            #expect(run.signal == nil, "\(label): \(run)")
            #expect(run.status == 0 || run.status == 74, "\(label): \(run)")
            if run.status == 74 {
                surfaced += 1
                #expect(run.stderr.contains("(\(errno))"), "\(label): \(run)")
            } else {
                // A fault on one entry: the plan goes on and says which entry it skipped and why.
                let decoded = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
                #expect(decoded != nil, "\(label): plan JSON must stay valid\n\(run)")
                let skipped = decoded?["skipped"] as? [[String: Any]] ?? []
                let reasons = skipped.compactMap { $0["reason"] as? String }
                if !reasons.isEmpty {
                    surfaced += 1
                    // ENOENT means the entry vanished: that is the reason given; any other errno is named.
                    #expect(reasons.contains { $0.contains("(\(errno))") || errno == "ENOENT" && $0.contains("vanished") }, "\(label): \(reasons)")
                }
            }
            #expect(try s.manifest() == before, "\(label): plan changed the tree")
        }
        #expect(surfaced >= 1, "some injected \(kind.rawValue) failure must surface in the plan")
    }

    @Test("the in-use check's reading of /proc is outside the sweep's count: readdir 1 and 2 fail the listing of tmp/tree, the tree's first, not the scan of every process (read beside the run)")
    func procReadingNotCounted() throws {
        let ref = try CrashReference.make()
        for n in [1, 2] {
            let s = try CrashScenario()
            let run = try policyctl(["apply", s.planFile, "--yes", "--log-format", "json"] + s.judged,
                                    environment: ["POLICYCTL_FAULTS": "readdir:\(n):EIO"])
            #expect(run.status == 3, "readdir:\(n): \(run)")
            #expect(run.stderr.contains("tmp/tree: Input/output error (EIO) [readdir]"), "readdir:\(n): \(run)")
            #expect(!run.stdout.contains("in use unknown"), "readdir:\(n): \(run)")
            #expect(try policyctl(["recover", "--root", s.root]).status == 0)
            #expect(try s.manifest() == s.rolledBack(ref))
        }
    }
}

/// The first word of a manifest line: the entry's path.
func manifestPath(_ line: String) -> String { String(line.split(separator: " ").first ?? "") }

/// An item apply reported as skipped (from `--log-format json`), and the manifest such a run must leave.
struct SkippedItem: Sendable, Hashable {
    var verb: String
    var path: String
    /// For `setxattr`: which attribute.
    var attribute: String?
    /// Set when a call on the entry failed: its errno name.
    var errno: String?

    static func parse(_ stdout: String) -> [SkippedItem] {
        stdout.split(separator: "\n").compactMap { line -> SkippedItem? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["outcome"] as? String == "skipped", let verb = object["action"] as? String,
                  let path = object["path"] as? String else { return nil }
            return SkippedItem(verb: verb, path: path, attribute: object["attribute"] as? String, errno: object["errno"] as? String)
        }
    }

    /// The after-manifest with every skipped item exactly as in `before`, and what it would have made absent:
    /// a deleted entry and whatever of its contents no other (done) delete removed; a renamed or trashed entry
    /// back at its path and nothing at its destination; a directory not made; an attribute with its old value.
    /// Also the paths that may be either way: a trash folder made on the way for a move that was then skipped.
    static func expectedManifest(before: [String], after: [String], skipped: [SkippedItem]) -> (lines: [String], optional: Set<String>) {
        var lines = Dictionary(after.map { (manifestPath($0), $0) }, uniquingKeysWith: { a, _ in a })
        let old = Dictionary(before.map { (manifestPath($0), $0) }, uniquingKeysWith: { a, _ in a })
        func under(_ p: String, _ top: String) -> Bool { p == top || p.hasPrefix(top + "/") }
        let skippedDeletes = Set(skipped.filter { $0.verb == "delete" }.map(\.path))
        let doneDeletes = CrashScenario.actions.compactMap { a -> String? in
            if case .delete(let p) = a, !skippedDeletes.contains(p) { return p }
            return nil
        }
        var optional: Set<String> = []
        for item in skipped {
            switch item.verb {
            case "delete":
                for (p, line) in old where under(p, item.path) && !doneDeletes.contains(where: { under(p, $0) }) { lines[p] = line }
            case "rename":
                for a in CrashScenario.actions {
                    if case .rename(let from, let to) = a, from == item.path { lines[to] = nil }
                }
                lines[item.path] = old[item.path]
            case "trash":
                let name = String(item.path.split(separator: "/").last ?? "")
                for p in Array(lines.keys) where p.contains(".Trash/") {
                    let last = String(p.split(separator: "/").last ?? "")
                    if last == name || last == name + ".trashinfo" { lines[p] = nil }
                }
                lines[item.path] = old[item.path]
                for a in CrashScenario.actions {
                    if case .trash(let p, let folder) = a, p == item.path, old[folder] == nil { optional.insert(folder) }
                }
            case "mkdir":
                for p in Array(lines.keys) where under(p, item.path) { lines[p] = nil }
            case "setxattr":
                guard let attribute = item.attribute, let line = lines[item.path] else { break }
                let prefix = attribute + "="
                var tokens = line.split(separator: " ").map(String.init).filter { !$0.hasPrefix(prefix) }
                if let was = old[item.path]?.split(separator: " ").map(String.init).first(where: { $0.hasPrefix(prefix) }) {
                    tokens.append(was)
                }
                let head = tokens.filter { !$0.hasPrefix("user.") }
                lines[item.path] = (head + tokens.filter { $0.hasPrefix("user.") }.sorted()).joined(separator: " ")
            case "write-tag":
                lines[item.path + "/CACHEDIR.TAG"] = nil
            default:
                break
            }
        }
        return (lines.values.filter { !optional.contains(manifestPath($0)) }.sorted(), optional)
    }
}
