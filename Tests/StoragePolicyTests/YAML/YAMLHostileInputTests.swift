// Tests that hostile or broken input (binary, NUL, bad UTF-8, tabs, huge files) fails cleanly with a location.
// Never depends on timing: the large-file test proves it loads, the benchmarks measure how fast.
import Testing
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("YAML reader: hostile input", .timeLimit(.minutes(10)))
struct YAMLHostileInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let mark: Mark
        let message: String
        var testDescription: String { name }
    }

    static func utf16LE(_ text: String) -> [UInt8] { text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
    static func utf16BE(_ text: String) -> [UInt8] { text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }

    static let located: [Case] = [
        Case(name: "NUL byte", bytes: Array("a: 1\nb: x\u{0}y\n".utf8),
             mark: Mark(line: 2, column: 5), message: "control characters are not allowed (U+0000)"),
        Case(name: "bell character", bytes: Array("a: \u{7}".utf8),
             mark: Mark(line: 1, column: 4), message: "control characters are not allowed (U+0007)"),
        Case(name: "invalid leading byte", bytes: Array("a: 1\nbb: é\n".utf8) + [0xFF, 0x41],
             mark: Mark(line: 3, column: 1), message: "invalid leading UTF-8 octet (0xFF)"),
        Case(name: "invalid trailing byte points at its character", bytes: Array("a: 1\n\nccc: ".utf8) + [0xC3, 0x28],
             mark: Mark(line: 3, column: 6), message: "invalid trailing UTF-8 octet (0x28)"),
        Case(name: "truncated UTF-8 at the end", bytes: Array("a: é".utf8) + [0xE2, 0x82],
             mark: Mark(line: 1, column: 5), message: "incomplete UTF-8 octet sequence"),
        Case(name: "byte-order mark is not a column", bytes: [0xEF, 0xBB, 0xBF] + Array("ab: ".utf8) + [0xFF],
             mark: Mark(line: 1, column: 5), message: "invalid leading UTF-8 octet (0xFF)"),
        Case(name: "CR LF line ends", bytes: Array("a: 1\r\nb: 2\r\nc: ".utf8) + [0xFF],
             mark: Mark(line: 3, column: 4), message: "invalid leading UTF-8 octet (0xFF)"),
        Case(name: "line separator ends a line, as libyaml counts", bytes: Array("- a\u{2028}- ".utf8) + [0xFF],
             mark: Mark(line: 2, column: 3), message: "invalid leading UTF-8 octet (0xFF)"),
        Case(name: "bad byte past libyaml's first input chunk", bytes: Array(String(repeating: "- x\n", count: 10_000).utf8) + [0x80],
             mark: Mark(line: 10_001, column: 1), message: "invalid leading UTF-8 octet (0x80)"),
        Case(name: "UTF-16 lone low surrogate", bytes: [0xFF, 0xFE] + utf16LE("a: 1\nb: ") + [0x00, 0xDC],
             mark: Mark(line: 2, column: 4), message: "unexpected low surrogate area (U+DC00)"),
        Case(name: "UTF-16 odd length", bytes: [0xFE, 0xFF, 0x00],
             mark: Mark(line: 1, column: 1), message: "incomplete UTF-16 character"),
        Case(name: "tab as indentation", bytes: Array("a:\n\tb: 1\n".utf8),
             mark: Mark(line: 2, column: 1), message: "found character that cannot start any token"),
        Case(name: "tab inside indentation", bytes: Array("a:\n  b: 1\n\t c: 2\n".utf8),
             mark: Mark(line: 3, column: 1), message: "found a tab character that violates indentation"),
        Case(name: "unclosed flow sequence", bytes: Array("a: [1, 2\n".utf8),
             mark: Mark(line: 2, column: 1), message: "did not find expected ',' or ']'"),
        Case(name: "unclosed quote", bytes: Array("a: 'x\n".utf8),
             mark: Mark(line: 2, column: 1), message: "found unexpected end of stream"),
    ]

    @Test("broken input fails with libyaml's message at the exact line and column", arguments: located)
    func locatedErrors(testCase: Case) {
        let error = loadError(testCase.bytes)
        #expect(error?.mark == testCase.mark)
        #expect(error?.message == testCase.message)
    }

    @Test("UTF-16 input with a byte-order mark loads like UTF-8")
    func utf16() throws {
        for bytes in [[0xFF, 0xFE] + Self.utf16LE("a: é\nb: [x]\n"), [0xFE, 0xFF] + Self.utf16BE("a: é\nb: [x]\n")] {
            let root = try #require(try YAML.load(bytes))
            #expect(root.flow == "{a: é, b: [x]}")
            #expect(root["b"]?.mark == Mark(line: 2, column: 4))
        }
    }

    /// Loads `bytes`, which may be anything: it must load, or fail with a mark inside the input.
    static func expectLoadsOrLocates(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try YAML.loadAll(bytes)
        } catch {
            // Every byte that could end a line (LF, CR, NEL, LS, PS) counted: an upper bound on the lines.
            let lineEnds = bytes.count(where: { [0x0A, 0x0D, 0x85, 0xA8, 0xA9].contains($0) })
            #expect(error.mark.line >= 1 && error.mark.column >= 1, "\(error) for \(bytes)", sourceLocation: sourceLocation)
            #expect(error.mark.line <= lineEnds + 1, "\(error) for \(bytes)", sourceLocation: sourceLocation)
        }
    }

    @Test("random bytes never crash the reader; failures are located", arguments: 0..<8)
    func randomBytes(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        for _ in 0..<100 {
            let length = Int.random(in: 0...400, using: &random)
            Self.expectLoadsOrLocates((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    static let policy = Array(YAMLReaderTests.policy.utf8) + Array("\nbase: &b {after: 1h}\nother: *b\nlist: |\n  x\n".utf8)
    static let interesting: [UInt8] = Array("[]{}:,-&*!|>'\"#%?@` \t\n\r\\".utf8) + [0x00, 0xFF, 0xC3, 0xE2, 0x80, 0x85]

    @Test("mutated policies never crash the reader; failures are located", arguments: 0..<8)
    func mutatedPolicies(seed: Int) {
        var random = SplitMix64(seed: 1_000 + UInt64(seed))
        for _ in 0..<250 {
            var bytes = Self.policy
            for _ in 0...Int.random(in: 0...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                let byte = Self.interesting.randomElement(using: &random) ?? 0
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                default: bytes.remove(at: at)
                }
            }
            Self.expectLoadsOrLocates(bytes)
        }
    }

    @Test("a 10 MB policy loads whole, with marks to its last line")
    func tenMegabytes() throws {
        var text = "rules:\n"
        var count = 0
        while text.utf8.count < 10_000_000 {
            text += "  - name: rule-\(count)\n    path: 'some/path/\(count)'\n    expire: {after: 24h, by: mtime}\n    match: [\"**/*.tmp\", b]\n"
            count += 1
        }
        let root = try #require(try YAML.load(text))
        let rules = try #require(root["rules"]?.sequence)
        #expect(rules.count == count)
        #expect(rules.last?["name"]?.scalar == "rule-\(count - 1)")
        #expect(rules.last?["match"]?.sequence?.last?.mark == Mark(line: count * 4 + 1, column: 25))
    }
}
