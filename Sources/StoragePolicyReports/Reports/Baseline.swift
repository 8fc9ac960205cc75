// A saved set of finding fingerprints: findings in it are reported as known and never fail an audit,
// which is how a team adopts the audit on an old tree. Reading or writing the file is the caller's job.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem

public struct Baseline: Sendable, Hashable {
    /// The `version` of the baseline file this library reads and writes.
    public static let formatVersion = 1

    /// One known finding. Rule and path are there for people reviewing the file; only the fingerprint counts.
    public struct Entry: Sendable, Hashable, Codable, Comparable {
        public var fingerprint: String
        public var rule: String
        /// The path as shown to people (escaped where it is not printable UTF-8).
        public var path: String

        public init(fingerprint: String, rule: String, path: String) {
            self.fingerprint = fingerprint; self.rule = rule; self.path = path
        }

        public static func < (a: Entry, b: Entry) -> Bool {
            (a.rule, a.path, a.fingerprint) < (b.rule, b.path, b.fingerprint)
        }
    }

    /// The policy the baseline was written for (informative: a renamed policy keeps its baseline).
    public var policy: String?
    /// Sorted by rule, then path, so a rewritten baseline diffs cleanly in review.
    public private(set) var entries: [Entry]
    private var fingerprints: Set<String>

    public init(policy: String?, entries: [Entry]) {
        self.policy = policy
        var seen = Set<String>()
        self.entries = entries.filter { seen.insert($0.fingerprint).inserted }.sorted()
        self.fingerprints = seen
    }

    /// A baseline that knows every one of `findings`.
    public init(policy: String?, findings: [Finding]) {
        self.init(policy: policy, entries: findings.map {
            Entry(fingerprint: $0.fingerprint, rule: $0.rule, path: $0.path.escaped)
        })
    }

    public func contains(_ finding: Finding) -> Bool { fingerprints.contains(finding.fingerprint) }

    /// Entries no current finding matches: fixed since the baseline was written.
    public func entriesNotFound(in findings: [Finding]) -> [Entry] {
        let current = Set(findings.map(\.fingerprint))
        return entries.filter { !current.contains($0.fingerprint) }
    }

    private struct File: Codable {
        var version: Int
        var tool: String?
        var policy: String?
        var findings: [Entry]
    }

    /// The baseline file: pretty, sorted-key JSON with no timestamp, so writing it twice gives the same bytes.
    public func jsonData() throws -> Data {
        var bytes = try PrettyJSON.encode(file)
        bytes.append(0x0A)
        return Data(bytes)
    }

    /// What `jsonData` writes, as a value (a test holds PrettyJSON's bytes to JSONEncoder's for it).
    package var file: some Encodable { File(version: Baseline.formatVersion, tool: "policyctl", policy: policy, findings: entries) }

    /// Reads a baseline file; throws with a message naming what is wrong.
    public init(json: Data) throws(BaselineError) {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            throw BaselineError(message: "not a policyctl baseline (expected JSON with \"version\": 1 and \"findings\": [{\"fingerprint\", \"rule\", \"path\"}])")
        }
        guard file.version == Baseline.formatVersion else {
            throw BaselineError(message: "baseline version \(file.version) is not supported (this policyctl reads version \(Baseline.formatVersion))")
        }
        for entry in file.findings where !Baseline.isFingerprint(entry.fingerprint) {
            throw BaselineError(message: "'\(entry.fingerprint)' is not a fingerprint (64 lowercase hex digits)")
        }
        self.init(policy: file.policy, entries: file.findings)
    }

    private static func isFingerprint(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// A baseline file that cannot be used.
public struct BaselineError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
