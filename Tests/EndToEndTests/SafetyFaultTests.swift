// Fault injection through the built binary: the Nth call of every syscall kind fails with each errno, during
// apply, recover and plan. The tree is exactly before or after once recovery has run; errors name path and errno.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
    @Test("apply with the Nth call of each kind failing: exit 0, 3 or 74; after recover exactly before or after",
          arguments: SystemCall.allCases)
    func applySweep(kind: SystemCall) throws {
        let ref = try CrashReference.make()
        var failed = 0
        var cleanAfter = 0
        for n in sweepPoints(limit: 400) {
            let errno = injectedErrnos[(n - 1) % injectedErrnos.count]
            let s = try CrashScenario()
            let label = "\(kind.rawValue):\(n):\(errno)"
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_FAULTS": label])
            #expect(run.signal == nil, "\(label): the process died\n\(run)")
            #expect([0, 3, 74].contains(run.status), "\(label): \(run)")
            if run.status != 0 {
                failed += 1
                #expect(namesPathAndErrno(run.stderr, errno: errno), "\(label): the error must name a path and (\(errno))\n\(run)")
            }
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "\(label): \(recover)")
            let m = try s.manifest()
            if m == ref.after || m == ref.before {
                if m == ref.after && run.status == 0 { cleanAfter += 1 } else { cleanAfter = 0 }
            } else {
                // Only a target skipped as changed or vanished may stay as it was, and then it is reported.
                let odd = Set(m).symmetricDifference(ref.after).subtracting(ref.before).sorted()
                // A skipped trash or rename leaves its destination as before too: match by the entry's name.
                var skippedNames = run.stdout.split(separator: "\n").filter { $0.hasPrefix("skipped ") }.compactMap { line -> String? in
                    let words = line.split(separator: " ")
                    guard words.count >= 3 else { return nil }
                    return String(words[2].split(separator: "/").last ?? "").trimmingCharacters(in: CharacterSet(charactersIn: ":"))
                }
                // A skipped rename's destination keeps its before state too: its name is the plan's target.
                for case .rename(let from, let to) in CrashScenario.actions where skippedNames.contains(String(from.split(separator: "/").last!)) {
                    skippedNames.append(String(to.split(separator: "/").last!))
                }
                let unreported = odd.filter { line in
                    let path = String(line.split(separator: " ").first ?? "")
                    // A skipped FreeDesktop trash move also lacks its info/NAME.trashinfo: the same entry.
                    return !skippedNames.contains { name in
                        !name.isEmpty && path.split(separator: "/").contains { $0 == name || $0 == name + ".trashinfo" }
                    }
                }
                if unreported.allSatisfy({ $0.hasPrefix("app/.Trash/") || $0.hasPrefix("docs/.Trash/") || $0.contains(".trashinfo file") })
                    && !unreported.isEmpty {
                    // Found by this sweep, not fixed yet (Docs/safety.md #7, #9): an injected ENOENT while stamping a
                    // trashed item is swallowed (trashed without its stamps), or a skipped trash leaves its .trashinfo;
                    // or an injected ENOENT opening the existing FreeDesktop trash folder makes it look missing, and
                    // the items go in as app-layout items (unreported).
                    withKnownIssue("trash stamps silently dropped, or the trash layout misread (\(label))") {
                        #expect(unreported.isEmpty, "\(label): \(unreported)")
                    }
                } else {
                    #expect(run.status == 0 && unreported.isEmpty, "\(label): neither before nor after, and not reported as skipped: \(unreported)\n\(run)")
                }
                cleanAfter = 0
            }
            try s.expectStagingEmpty()
            try s.expectOutsideUntouched()
            // Past the last call of this kind three runs in a row complete untouched: stop.
            if cleanAfter >= 3 { break }
        }
        // unlink and removexattr only run in a purge after the commit (a failure there is finished by recover)
        // and in rollbacks: a clean apply may never fail on them.
        if kind != .unlink && kind != .removexattr {
            #expect(failed >= 1, "some injected \(kind.rawValue) failure must surface")
        }
    }

    @Test("recover with the Nth call of each kind failing: recover again (no faults) converges to before",
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
            #expect(m == ref.before, "\(label): recovery after a failed recovery must roll back exactly: \(Set(m).symmetricDifference(ref.before).sorted())\nfirst: \(faulty)\nagain: \(again)")
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
}
