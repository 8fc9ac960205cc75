// Properties over random trees and random policies from a seeded RNG (the seed is in every message, so a
// failure reproduces): plan is deterministic and stays in scope, apply then plan is empty, quotas are met.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Properties over random trees and policies")
struct PropertyTests {
    /// Fixed seeds, plus one from POLICYCTL_PROPERTY_SEED to replay or explore.
    static let seeds: [UInt64] = {
        var seeds: [UInt64] = (1...24).map { UInt64($0) &* 0x2545_F491_4F6C_DD1D }
        if let text = ProcessInfo.processInfo.environment["POLICYCTL_PROPERTY_SEED"], let s = UInt64(text) { seeds.append(s) }
        return seeds
    }()

    static let scopes = ["a", "b", "a/c", "b/d/e"]

    /// A random tree: the scope folders and up to 60 files and folders in them, odd names included.
    static func randomTree(_ s: SafetyRoot, _ rng: inout SplitMix64) -> [String] {
        var directories = ["a", "b", "a/c", "b/d", "b/d/e"]
        for d in directories { s.dir(s.root + "/" + d) }
        let stems = ["x", "Y", "data", "Cache", "-dash", "sp ace", "nl\nname", "UP", "z"]
        let extensions = ["", ".tmp", ".TXT", ".txt", ".log", ".part"]
        var files: [String] = []
        for _ in 0..<Int.random(in: 20...60, using: &rng) {
            let parent = directories.randomElement(using: &rng)!
            let name = stems.randomElement(using: &rng)! + "\(Int.random(in: 0..<9, using: &rng))" + extensions.randomElement(using: &rng)!
            let p = parent + "/" + name
            if Int.random(in: 0..<6, using: &rng) == 0 {
                if !directories.contains(p) && !files.contains(p) { s.dir(s.root + "/" + p); directories.append(p) }
            } else if !directories.contains(p) {
                let size = Int.random(in: 0...9000, using: &rng)
                s.file(s.root + "/" + p, String(repeating: "d", count: size), ageHours: Double(Int.random(in: 0...96, using: &rng)))
                files.append(p)
            }
        }
        // Folders get their ages last: making their entries moved their mtimes.
        for d in directories.reversed() { s.age(s.root + "/" + d, hours: Double(Int.random(in: 0...96, using: &rng))) }
        return files
    }

    static func randomPolicy(_ rng: inout SplitMix64) -> [Rule] {
        var rules: [Rule] = []
        for i in 0..<Int.random(in: 1...3, using: &rng) {
            let scope = scopes.randomElement(using: &rng)!
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: rules.append(rule("expire\(i)", scope, expire(.hours(Int64.random(in: 1...72, using: &rng)))))
            case 1: rules.append(rule("expire-tmp\(i)", scope, expire(.hours(Int64.random(in: 1...72, using: &rng))), match: ["**/*.tmp", "**/*.part"]))
            case 2: rules.append(rule("quota\(i)", scope, .quota(Quota(max: ByteSize(bytes: Int64.random(in: 4096...60_000, using: &rng)),
                                                                      target: .percent(Double(Int.random(in: 50...100, using: &rng)))))))
            default: rules.append(rule("lower\(i)", scope, .naming(Naming(letterCase: .lower))))
            }
        }
        return rules
    }

    static func within(_ p: RelativePath, _ scope: RelativePath) -> Bool {
        scope.isRoot || p == scope || p.string.hasPrefix(scope.string + "/")
    }

    /// Allocated bytes of the regular files under `scope`, as `du` counts them.
    static func usage(_ root: String, _ scope: String) -> Int64 {
        Manifest.take(root + "/" + scope).filter { $0.type == UInt32(S_IFREG) }.reduce(0) { total, e in
            var st = stat()
            let p = root + "/" + scope + "/" + String(decoding: e.path, as: UTF8.self)
            return total + (lstat(p, &st) == 0 ? Int64(st.st_blocks) * 512 : 0)
        }
    }

    @Test("plan is deterministic, in scope; apply then plan is empty; quotas end at or under target", arguments: seeds)
    func properties(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let s = SafetyRoot()
        _ = Self.randomTree(s, &rng)
        let rules = Self.randomPolicy(&rng)
        let label = "seed \(seed) (replay: POLICYCTL_PROPERTY_SEED=\(seed)); rules \(rules.map { "\($0.name)@\($0.path)" })"
        let now = Tree.currentTimeNs()
        let policy = Policy(name: "random", rules: rules)
        func plan(threads: Int) throws -> Plan {
            try Planner(policy: policy, root: s.root, options: PlanOptions(now: now, threads: threads)).plan()
        }
        let first = try plan(threads: 2)
        let second = try plan(threads: 1)
        #expect(first.lines == second.lines, "\(label): same tree, same plan")
        #expect(first.findings == second.findings, "\(label)")

        let byName = Dictionary(rules.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for action in first.actions {
            guard let r = byName[action.rule] else {
                Issue.record("\(label): \(action.line) names no rule of the policy (\(action.rule))")
                continue
            }
            #expect(Self.within(action.path, r.path) && action.path != r.path, "\(label): \(action.line) is outside \(r.name)'s scope \(r.path)")
            if case .rename(let to) = action.kind {
                #expect(Self.within(to, r.path), "\(label): \(action.line) renames out of scope")
            }
        }

        let report = try s.apply(first)
        #expect(report.skipped.isEmpty, "\(label): nothing changed, nothing may be skipped: \(report.skipped.map(\.action.line))")
        let after = try plan(threads: 2)
        #expect(after.lines.isEmpty, "\(label): apply then plan must be empty, got \(after.lines)")

        for r in rules {
            guard case .quota(let q) = r.kind else { continue }
            let used = Self.usage(s.root, r.path.string)
            #expect(used <= q.target.bytes(of: q.max) || used <= q.max.bytes && !first.actions.contains { $0.rule == r.name },
                    "\(label): \(r.name) uses \(used) bytes after apply, target \(q.target.bytes(of: q.max)), max \(q.max.bytes)")
        }
    }
}
