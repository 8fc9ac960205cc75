// The result of planning: every action and violation, what was skipped, and a summary; deterministic
// (sorted by path then rule) so the same tree and policy always give the same plan. Changes nothing.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem

/// The result of planning: every action and violation, what was skipped, a summary and a fingerprint.
///
/// Deterministic: the same tree and policy always give the same plan. Encode it with `jsonData()` or
/// `PlanJSONWriter`, show it with `PlanRenderer`, apply it with `StorageEngine.apply(_:)` or `Applier`.
public struct Plan: Sendable, Hashable, Codable {
    /// The plan format version.
    public var version: Int
    /// The name of the policy that made the plan.
    public var policy: String
    /// The root as the user gave it, made absolute.
    public var root: String
    /// RFC 3339 UTC, e.g. `2026-11-29T13:22:43Z`.
    public var createdAt: String
    /// The evaluation time all ages were measured against, in nanoseconds since the epoch (``evaluatedAt``).
    package var evaluatedAtNs: Int64
    /// The changes apply would make, sorted by path then rule.
    public var actions: [Action]
    /// Findings no action fixes (and audit-mode rules' findings), sorted by path then rule.
    public var violations: [Violation]
    /// Entries the walk could not judge, and why.
    public var skipped: [SkippedEntry]
    /// Remarks for people (e.g. atime is unreliable on this mount).
    public var notes: [String]
    /// Counts and bytes.
    public var summary: Summary
    /// What a saved plan is checked against before it is applied.
    public var fingerprint: Fingerprint?
    /// `plan --at`: the instant (RFC 3339) the plan was evaluated as of instead of now. Such a plan is a what-if:
    /// apply refuses it (PlanFile.staleness). nil for every plan made as of now.
    public var asOf: String? = nil
    /// The policy holds deletes back (`quarantine:`): which rules, for how long, and which deletes are exempt.
    /// nil when no rule's deletes are quarantined.
    public var quarantine: PlanQuarantine? = nil

    /// A plan; the summary is computed from the actions, violations and skipped entries.
    package init(policy: String, root: String, createdAt: String, evaluatedAtNs: Int64, actions: [Action] = [],
                violations: [Violation] = [], skipped: [SkippedEntry] = [], notes: [String] = [],
                entriesScanned: Int = 0, fingerprint: Fingerprint? = nil) {
        self.version = StoragePolicyVersion.planFormat
        self.policy = policy; self.root = root; self.createdAt = createdAt; self.evaluatedAtNs = evaluatedAtNs
        self.actions = actions; self.violations = violations; self.skipped = skipped; self.notes = notes
        self.summary = Summary(entriesScanned: entriesScanned, actions: actions, violations: violations.count,
                               skipped: skipped.count)
        self.fingerprint = fingerprint
    }

    /// The evaluation time all ages were measured against.
    public var evaluatedAt: Date { Date(nanosecondsSinceEpoch: evaluatedAtNs) }

    /// True when applying would change something.
    public var hasChanges: Bool { !actions.isEmpty }

    /// What a plan amounts to.
    public struct Summary: Sendable, Hashable, Codable {
        /// Entries the walk listed.
        public var entriesScanned: Int
        /// Count per action name: delete, rename, trash, mkdir, setxattr, write-tag (all present, maybe 0).
        public var actions: [String: Int]
        /// Bytes the deletions free (allocated, as `du`).
        public var bytesFreed: Int64
        /// How many violations.
        public var violations: Int
        /// How many entries were skipped.
        public var skipped: Int
        /// How many entries the deletes remove, a directory delete counted with everything inside it (what
        /// `max-delete` counts). nil in a plan saved before it was recorded.
        public var deleteEntries: Int?
        /// Bytes the deletions free per rule that deletes, by rule name. nil in a plan saved before it was recorded.
        public var bytesFreedByRule: [String: Int64]?
        /// The volumes the deletions free space on: the root's, since the walk never crosses a device (the
        /// planner fills it in). nil in a plan saved before it was recorded.
        public var volumes: [Volume]?

        /// One volume's share of a plan: the bytes its deletions free, and (when pressure rules measured it
        /// before the walk) its free space then and its size, so what is free afterwards can be told.
        public struct Volume: Sendable, Hashable, Codable {
            /// The volume's device number (st_dev of the root).
            public var device: UInt64
            /// Bytes the plan's deletions free on it.
            public var bytesFreed: Int64
            /// Free bytes (statvfs f_bavail) when the plan was made; nil when the plan did not measure them.
            public var freeBefore: Int64?
            /// The volume's size in bytes; nil when the plan did not measure it.
            public var size: Int64?

            package init(device: UInt64, bytesFreed: Int64, freeBefore: Int64? = nil, size: Int64? = nil) {
                self.device = device; self.bytesFreed = bytesFreed; self.freeBefore = freeBefore; self.size = size
            }
        }

        /// The summary of these actions.
        package init(entriesScanned: Int, actions: [Action], violations: Int, skipped: Int) {
            self.entriesScanned = entriesScanned
            // Counted per kind in a small array, named once at the end: hashing a name per action cost more.
            var perKind = [Int](repeating: 0, count: Action.Kind.names.count)
            var freed: Int64 = 0
            var deleted = 0
            actions.withUnsafeBufferPointer { all in
                for i in all.indices {
                    let code = all[i].kind.ordinal
                    perKind[code] += 1
                    if code == 0 { freed += all[i].bytes; deleted += Swift.max(1, all[i].entries) }
                }
            }
            self.deleteEntries = deleted
            var byRule: [String: Int64] = [:]
            var lastRule: String? = nil
            var lastBytes: Int64 = 0
            // Summed over runs of one rule (the actions are mostly grouped): one hash per run, not per action.
            for a in actions where a.isDelete {
                if a.rule != lastRule {
                    if let r = lastRule { byRule[r, default: 0] += lastBytes }
                    lastRule = a.rule
                    lastBytes = 0
                }
                lastBytes += a.bytes
            }
            if let r = lastRule { byRule[r, default: 0] += lastBytes }
            // Absent (not empty) without deletes: a plan that frees nothing reads as it always did.
            self.bytesFreedByRule = byRule.isEmpty ? nil : byRule
            var counts = ["delete": 0, "rename": 0, "trash": 0, "mkdir": 0, "setxattr": 0, "write-tag": 0]
            for (code, name) in Action.Kind.names.enumerated() where perKind[code] > 0 { counts[name] = perKind[code] }
            self.actions = counts
            self.bytesFreed = freed
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
        /// The root directory's inode.
        public var rootInode: UInt64

        /// A fingerprint.
        package init(policySHA256: String, policyPath: String?, rootDevice: UInt64, rootInode: UInt64) {
            self.policySHA256 = policySHA256; self.policyPath = policyPath
            self.rootDevice = rootDevice; self.rootInode = rootInode
        }
    }

    /// Sorts actions and violations by path, then rule: the deterministic order plans are shown in.
    package mutating func sort() {
        // Swift's sort is not stable: break every tie (one rule may set a marker and write a tag on one path).
        // Paths compared as bytes first (memcmp, the order of RelativePath's <); the strings only on a tie.
        actions.sort { a, b in
            let c = ByteOrder.compare(a.path.bytes, b.path.bytes)
            if c != 0 { return c < 0 }
            return (a.rule, a.kind.name, a.reason) < (b.rule, b.kind.name, b.reason)
        }
        sortFindings()
    }

    /// Sorts violations and skipped entries as `sort()` does, leaving the actions as they are: for a caller
    /// whose actions are already in that order (the planner sorts them with ByteOrder.sortActions).
    package mutating func sortFindings() {
        violations.sort { a, b in
            let c = ByteOrder.compare(a.path.bytes, b.path.bytes)
            return c != 0 ? c < 0 : (a.rule, a.message) < (b.rule, b.message)
        }
        skipped.sort { a, b in
            let c = ByteOrder.compare(a.path.bytes, b.path.bytes)
            return c != 0 ? c < 0 : a.reason < b.reason
        }
    }

    /// The plan as stable, pretty JSON (keys sorted): the bytes JSONEncoder gives the Codable form
    /// (`.prettyPrinted, .sortedKeys, .withoutEscapingSlashes`), written by PlanJSONWriter in that layout
    /// (Tests/StoragePolicyTests/Base/JSONWriterTests.swift holds the two equal).
    public func jsonData() throws -> Data {
        Data(PlanJSONWriter.data(self, layout: .encoder))
    }

    /// Reads a plan written by `jsonData()` or `PlanJSONWriter`.
    public static func decode(json: Data) throws -> Plan {
        try JSONDecoder().decode(Plan.self, from: json)
    }

    /// Reads a plan file's bytes in place: wrapping them in a `Data` without a copy keeps a large plan (70 MB
    /// of JSON at 190,000 actions) in memory once, not twice, while it is decoded (Docs/performance.md).
    package static func decode(json bytes: [UInt8]) throws -> Plan {
        try bytes.withUnsafeBytes { raw throws -> Plan in
            guard let base = raw.baseAddress, raw.count > 0 else { return try decode(json: Data()) }
            return try decode(json: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: raw.count, deallocator: .none))
        }
    }
}
