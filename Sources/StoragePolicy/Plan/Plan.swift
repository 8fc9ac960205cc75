// The result of planning: every action and violation, what was skipped, and a summary; deterministic
// (sorted by path then rule) so the same tree and policy always give the same plan. Changes nothing.
import Foundation

public struct Plan: Sendable, Hashable, Codable {
    public var version: Int
    public var policy: String
    /// The root as the user gave it, made absolute.
    public var root: String
    /// RFC 3339 UTC, e.g. `2026-11-29T13:22:43Z`.
    public var createdAt: String
    /// The evaluation time all ages were measured against, in nanoseconds since the epoch.
    public var evaluatedAtNs: Int64
    public var actions: [Action]
    public var violations: [Violation]
    public var skipped: [SkippedEntry]
    public var notes: [String]
    public var summary: Summary
    public var fingerprint: Fingerprint?

    public init(policy: String, root: String, createdAt: String, evaluatedAtNs: Int64, actions: [Action] = [],
                violations: [Violation] = [], skipped: [SkippedEntry] = [], notes: [String] = [],
                entriesScanned: Int = 0, fingerprint: Fingerprint? = nil) {
        self.version = StoragePolicyVersion.planFormat
        self.policy = policy; self.root = root; self.createdAt = createdAt; self.evaluatedAtNs = evaluatedAtNs
        self.actions = actions; self.violations = violations; self.skipped = skipped; self.notes = notes
        self.summary = Summary(entriesScanned: entriesScanned, actions: actions, violations: violations.count,
                               skipped: skipped.count)
        self.fingerprint = fingerprint
    }

    /// True when applying would change something.
    public var hasChanges: Bool { !actions.isEmpty }

    public struct Summary: Sendable, Hashable, Codable {
        public var entriesScanned: Int
        /// Count per action name: delete, rename, trash, mkdir, setxattr, write-tag (all present, maybe 0).
        public var actions: [String: Int]
        public var bytesFreed: Int64
        public var violations: Int
        public var skipped: Int

        public init(entriesScanned: Int, actions: [Action], violations: Int, skipped: Int) {
            self.entriesScanned = entriesScanned
            var counts = ["delete": 0, "rename": 0, "trash": 0, "mkdir": 0, "setxattr": 0, "write-tag": 0]
            for a in actions { counts[a.kind.name, default: 0] += 1 }
            self.actions = counts
            self.bytesFreed = actions.reduce(0) { $0 + ($1.isDelete ? $1.bytes : 0) }
            self.violations = violations
            self.skipped = skipped
        }
    }

    /// What `apply PLANFILE` checks before trusting a saved plan.
    public struct Fingerprint: Sendable, Hashable, Codable {
        /// SHA-256 (hex) of the policy file's bytes.
        public var policySHA256: String
        /// The policy file's absolute path when it came from a file.
        public var policyPath: String?
        /// The root directory's identity, so a plan for one tree is never applied to another.
        public var rootDevice: UInt64
        public var rootInode: UInt64

        public init(policySHA256: String, policyPath: String?, rootDevice: UInt64, rootInode: UInt64) {
            self.policySHA256 = policySHA256; self.policyPath = policyPath
            self.rootDevice = rootDevice; self.rootInode = rootInode
        }
    }

    /// Sorts actions and violations by path, then rule: the deterministic order plans are shown in.
    public mutating func sort() {
        // Swift's sort is not stable: break every tie (one rule may set a marker and write a tag on one path).
        actions.sort { ($0.path, $0.rule, $0.kind.name, $0.reason) < ($1.path, $1.rule, $1.kind.name, $1.reason) }
        violations.sort { ($0.path, $0.rule, $0.message) < ($1.path, $1.rule, $1.message) }
        skipped.sort { ($0.path, $0.reason) < ($1.path, $1.reason) }
    }

    /// The plan as stable, pretty JSON (keys sorted).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    public static func decode(json: Data) throws -> Plan {
        try JSONDecoder().decode(Plan.self, from: json)
    }
}
