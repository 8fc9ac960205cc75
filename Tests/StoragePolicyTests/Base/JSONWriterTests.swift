// The one JSON writer (Base/JSONWriter.swift) gives every output the bytes it had before: plans the bytes
// JSONEncoder gave their Codable form, plan records JSONEncoder's default bytes, journal records their own
// escaping. (That the bottom layer names nothing above it is LayeringTests'.)
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply
@testable import StoragePolicyReports

@Suite("One JSON writer") struct JSONWriterTests {
    /// Every ASCII byte (controls, quote, slash, backslash, DEL), then non-ASCII text.
    static let awkward = String(decoding: Array(0..<0x80 as Range<UInt8>), as: UTF8.self) + "é ü 日本 \u{2028} /a/b"

    static func written(_ s: String, _ escaping: JSONWriter.Escaping) -> [UInt8] {
        var w = JSONWriter(capacity: 0)
        w.string(s, escaping: escaping)
        return w.takeBytes()
    }

    static func encoded(_ s: String, _ formatting: JSONEncoder.OutputFormatting) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting
        return Array(try encoder.encode([s])).dropFirst().dropLast().map { $0 }
    }

    @Test("strings: .encoder escapes as JSONEncoder without escaping slashes, .encoderEscapingSlashes as its default")
    func encoderEscaping() throws {
        for offset in 0..<9 {
            let s = String(repeating: "x", count: offset) + Self.awkward
            #expect(Self.written(s, .encoder) == (try Self.encoded(s, [.withoutEscapingSlashes])))
            #expect(Self.written(s, .encoderEscapingSlashes) == (try Self.encoded(s, [])))
        }
    }

    @Test("strings: journal escaping writes DEL, backspace and form feed as \\u00xx, as journals always have")
    func journalEscaping() {
        let bytes = Self.written("a\u{08}b\u{0C}c\u{7F}d\"\\\n\r\t\u{01}/é", .journal)
        #expect(String(decoding: bytes, as: UTF8.self) == #""a\u0008b\u000cc\u007fd\"\\\n\r\t\u0001/é""#)
        var w = JSONWriter()
        w.string("k", "v\u{7F}")
        w.int("n", -9_223_372_036_854_775_807 - 1)
        w.int(named: "a\"b", UInt64.max)
        w.bool("t", true)
        w.null("z")
        w.integers("i", [0, -1, 10])
        w.blob("b", [0xFF, 0x00])
        #expect(String(decoding: w.finished, as: UTF8.self)
            == #"{"k":"v\u007f","n":-9223372036854775808,"a\"b":18446744073709551615,"t":true,"z":null,"i":[0,-1,10],"bBase64":"/wA="}"#)
    }

    @Test("integers at every digit count and both ends read back as written")
    func integers() {
        var values: [Int64] = [0, .min, .max]
        var p: Int64 = 1
        for _ in 0..<18 { values += [p - 1, p, -p]; p *= 10 }
        for v in values {
            var w = JSONWriter(capacity: 0)
            w.integer(v)
            #expect(String(decoding: w.takeBytes(), as: UTF8.self) == String(v))
        }
        var w = JSONWriter(capacity: 0)
        w.integer(UInt64.max)
        #expect(String(decoding: w.takeBytes(), as: UTF8.self) == "18446744073709551615")
        // Each side of every power of ten, up to 10^19: the digit count's halving steps meet each boundary.
        var q: UInt64 = 1
        for k in 0...19 {
            for v in [q - 1, q, q + 1] {
                w.integer(v)
                #expect(String(decoding: w.takeBytes(), as: UTF8.self) == String(v), "10^\(k) near \(v)")
            }
            if k < 19 { q *= 10 }
        }
    }

    static func codable(_ plan: Plan) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(plan)
    }

    @Test("Plan.jsonData() is byte for byte what JSONEncoder gives the Codable form")
    func planBytes() throws {
        for plan in [PlanOutputTests.sample(), PlanTailTests.awkwardPlan(),
                     Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0)] {
            let written = Array(try plan.jsonData()), encoded = Array(try Self.codable(plan))
            #expect(written == encoded, "\(Self.firstDifference(written, encoded))")
        }
        // The plan layout (what `plan --format json` writes) differs only in empty arrays and the final newline.
        let empty = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0)
        let plan = String(decoding: PlanJSONWriter.data(empty), as: UTF8.self)
        let encoder = String(decoding: try Self.codable(empty), as: UTF8.self)
        #expect(plan.hasSuffix("}\n") && plan.contains("\"actions\" : [],"))
        #expect(plan.replacingOccurrences(of: "[]", with: "[\n\n  ]") == encoder + "\n")
    }

    /// Where two outputs first differ, with some bytes of each around it.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        let at = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        func around(_ x: [UInt8]) -> String { String(decoding: x[max(0, at - 40)..<min(x.count, at + 40)], as: UTF8.self) }
        return "at byte \(at) of \(a.count)/\(b.count): written \(around(a).debugDescription), encoder \(around(b).debugDescription)"
    }

    @Test("a plan of many blocks: the two-thread writer gives the serial bytes, in any chunking")
    func manyBlocks() throws {
        var actions: [Action] = []
        for i in 0..<(2048 * 5 + 7) {
            actions.append(Action(kind: .delete, path: RelativePath(unchecked: Array("d/f\(i)".utf8)), rule: "r\(i % 3)",
                                  reason: i % 5 == 0 ? "q\"\(i)" : "age", bytes: Int64(i)))
        }
        let plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 1, actions: actions)
        let written = Array(try plan.jsonData()), encoded = Array(try Self.codable(plan))
        #expect(written == encoded, "\(Self.firstDifference(written, encoded))")
        var pieces: [[UInt8]] = []
        var writer = PlanJSONWriter(layout: .encoder) { pieces.append($0) }
        try writer.write(plan)
        #expect(pieces.count > 1)
        #expect(pieces.flatMap { $0 } == encoded)
    }

    @Test("a plan record is saved as JSONEncoder's default output wrote it (in its sorted key order), and reads back")
    func planRecord() throws {
        let record = PlanRecord(policyPath: "/etc/policyctl/a \"b\".yaml", root: "/srv/data/é")
        // JSONEncoder without .sortedKeys put the two keys in either order from one run to the next (both read
        // back the same); the record now always has the sorted one, which is also the declaration order.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(record.json == Array(try encoder.encode(record)))
        #expect(String(decoding: record.json, as: UTF8.self) == #"{"policyPath":"\/etc\/policyctl\/a \"b\".yaml","root":"\/srv\/data\/é"}"#)
        #expect(try JSONDecoder().decode(PlanRecord.self, from: Data(record.json)) == record)
    }
}

@Suite("Reports through the one writer") struct PrettyJSONTests {
    static func encoder<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static func same<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = try PrettyJSON.encode(value), encoded = try encoder(value)
        #expect(written == encoded, "\(JSONWriterTests.firstDifference(written, encoded))", sourceLocation: sourceLocation)
    }

    struct Awkward: Encodable {
        var empty: [Int] = []
        var emptyObject: [String: Int] = [:]
        var nested: [[String: [Int]]] = [["b": [], "a": [1, -2]], [:]]
        var optional: String? = nil
        var null: String? = nil
        var text = JSONWriterTests.awkward
        var numbers: [Int64] = [.min, .max, 0]
        var big = UInt64.max
        var flags = [true, false]
        var dollar = "$"
        enum CodingKeys: String, CodingKey { case empty, emptyObject, nested, optional, null, text, numbers, big, flags, dollar = "$schema" }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(empty, forKey: .empty); try c.encode(emptyObject, forKey: .emptyObject)
            try c.encode(nested, forKey: .nested); try c.encodeIfPresent(optional, forKey: .optional)
            try c.encodeNil(forKey: .null); try c.encode(text, forKey: .text); try c.encode(numbers, forKey: .numbers)
            try c.encode(big, forKey: .big); try c.encode(flags, forKey: .flags); try c.encode(dollar, forKey: .dollar)
        }
    }

    @Test("any Encodable: empty and nested containers, null, escapes, both ends of the integers, as JSONEncoder writes them")
    func awkward() throws {
        try Self.same(Awkward())
        try Self.same([Awkward(), Awkward()])
        try Self.same([String: [Int]]())
    }

    @Test("the JSON report, SARIF and the baseline file are JSONEncoder's bytes for the same values")
    func reports() throws {
        for report in [ReportFixture.report(), ReportFixture.report(baseline: ReportFixture.baseline), ReportFixture.cleanReport] {
            try Self.same(JSONReport().document(report))
            try Self.same(SARIFReport(workingDirectory: "/srv").document(report))
        }
        try Self.same(ReportFixture.baseline.file)
        try Self.same(Baseline(policy: nil, entries: []).file)
        #expect(throws: EncodingError.self) { try PrettyJSON.encode([1.5]) }
    }
}
