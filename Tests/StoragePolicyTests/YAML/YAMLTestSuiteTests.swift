// Runs every input of the official YAML test suite (../shared/yaml-test-suite) through the reader.
// Never fails on libyaml's known disagreements with the suite, but fails if they change, or if CI lacks the suite.
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

/// The suite's cases: each folder (or sub-folder, for numbered variants) with an `in.yaml`; a file named
/// `error` beside it marks input that must be rejected.
enum YAMLTestSuite {
    struct Case: Sendable, CustomTestStringConvertible {
        let id: String
        let folder: URL
        let expectsError: Bool
        var testDescription: String { id }

        var bytes: [UInt8] {
            get throws { try [UInt8](Data(contentsOf: folder.appendingPathComponent("in.yaml"))) }
        }
    }

    /// `#filePath` is Tests/StoragePolicyTests/YAML/this file; the suite sits beside the package root.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/yaml-test-suite").standardized

    static let isPresent = FileManager.default.fileExists(atPath: root.path)
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    static let cases: [Case] = {
        let files = FileManager.default
        func isCase(_ folder: URL) -> Bool { files.fileExists(atPath: folder.appendingPathComponent("in.yaml").path) }
        func children(_ folder: URL) -> [URL] {
            let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.sorted().map { folder.appendingPathComponent($0) }
        }
        var cases: [Case] = []
        for folder in children(root) {
            for candidate in isCase(folder) ? [folder] : children(folder) where isCase(candidate) {
                let id = String(candidate.path.dropFirst(root.path.count + 1))
                let expectsError = files.fileExists(atPath: candidate.appendingPathComponent("error").path)
                cases.append(Case(id: id, folder: candidate, expectsError: expectsError))
            }
        }
        return cases
    }()

    /// How each case fared: nil when it loaded, else the error.
    static func outcomes() throws -> [(Case, YAMLError?)] {
        try cases.map { testCase in
            let bytes = try testCase.bytes
            return (testCase, Result { () throws(YAMLError) in try YAML.loadAll(bytes) }.failure)
        }
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

// The limit catches a hang, not slowness: end-to-end tests elsewhere block the two cooperative threads of a
// 2-core machine while their child processes run, and a time limit counts that wait too (60 s was hit in CI).
@Suite("YAML reader: the official YAML test suite", .timeLimit(.minutes(10)))
struct YAMLTestSuiteTests {
    @Test("the suite is beside the package, as CI provides it", .enabled(if: YAMLTestSuite.isPresent || YAMLTestSuite.isCI))
    func suitePresent() throws {
        try #require(YAMLTestSuite.isPresent, "no YAML test suite at \(YAMLTestSuite.root.path)")
        #expect(YAMLTestSuite.cases.count == 402)
        #expect(YAMLTestSuite.cases.filter(\.expectsError).count == 94)
    }

    @Test("every case loads or fails with a location inside the file; marks stay inside it too",
          .enabled(if: YAMLTestSuite.isPresent), arguments: YAMLTestSuite.cases)
    func eachCase(testCase: YAMLTestSuite.Case) throws {
        let bytes = try testCase.bytes
        let lines = bytes.count(where: { $0 == 0x0A || $0 == 0x0D }) + 1
        do {
            for document in try YAML.loadAll(bytes) {
                for node in document.allNodes {
                    #expect(node.mark.line >= 1 && node.mark.column >= 1 && node.mark.line <= lines, "\(node.mark)")
                }
            }
        } catch {
            #expect(error.mark.line >= 1 && error.mark.column >= 1 && error.mark.line <= lines, "\(error)")
        }
    }

    /// Invalid inputs that libyaml 0.2.5 parses anyway (trailing content after flow collections, stray
    /// `...` and directives, anchors and tags in odd places). The policy decoder still judges what they become.
    static let acceptedInvalid: Set<String> = [
        "9C9N", "9HCY", "9JBA", "CVW2", "DK95/01", "EB22", "G5U8", "MUS6/00", "MUS6/01", "QB6E", "RHX7", "S98Z",
        "SU5Z", "X4QW", "Y79Y/003", "YJV2",
    ]

    @Test("libyaml accepts exactly these 16 of the suite's invalid inputs; every other one is rejected with a location",
          .enabled(if: YAMLTestSuite.isPresent))
    func acceptedInvalidInputs() throws {
        let invalid = try YAMLTestSuite.outcomes().filter { $0.0.expectsError }
        let accepted = Set(invalid.filter { $0.1 == nil }.map(\.0.id))
        #expect(accepted.count == Self.acceptedInvalid.count)
        #expect(accepted == Self.acceptedInvalid, "newly accepted: \(accepted.subtracting(Self.acceptedInvalid).sorted()), now rejected: \(Self.acceptedInvalid.subtracting(accepted).sorted())")
    }

    /// Valid inputs that libyaml 0.2.5 rejects: it predates YAML 1.2 on empty keys (`: x`), tabs as separation
    /// space, adjacent `"key":value` and `:`-led plain scalars in flow, reserved directives and `%YAML 1.3`,
    /// bare documents after `...` or a lone `...`, non-ASCII or `:` in anchor names, and a `%` line inside a
    /// block scalar. Policies need none of these forms; none is rejected by the reader's own rules.
    static let rejectedValid: Set<String> = [
        "2JQS", "2LFX", "2SXE", "4ABK", "4MUZ/00", "4MUZ/01", "4MUZ/02", "58MP", "5MUD", "5T43", "6BCT", "6CA3",
        "6LVF", "6M2F", "7Z25", "8XYN", "96NN/00", "96NN/01", "9SA2", "A2M4", "BEC7", "CFD4", "DBG4", "DK3J",
        "DK95/00", "DK95/03", "DK95/04", "FP8R", "FRK4", "HM87/00", "HWV9", "K3WX", "M2N8/00", "M7A3", "MUS6/05",
        "MUS6/06", "NHX8", "NJ66", "NKF9", "Q5MG", "QT73", "R4YG", "S3PD", "SM9W/01", "UKK6/00", "UT92", "VJP3/01",
        "W4TN", "W5VH", "Y79Y/001", "Y79Y/010",
    ]

    @Test("libyaml rejects exactly these valid inputs, and the reader's own rules reject none",
          .enabled(if: YAMLTestSuite.isPresent))
    func rejectedValidInputs() throws {
        let valid = try YAMLTestSuite.outcomes().filter { !$0.0.expectsError }
        let rejected = valid.filter { $0.1 != nil }
        let ids = Set(rejected.map(\.0.id))
        #expect(ids == Self.rejectedValid, "newly rejected: \(ids.subtracting(Self.rejectedValid).sorted()), now accepted: \(Self.rejectedValid.subtracting(ids).sorted())")
        let ownRules = ["duplicate key", "merge keys", "unknown alias", "alias ", "nesting exceeds"]
        for (testCase, error) in rejected {
            let message = error?.message ?? ""
            #expect(!ownRules.contains { message.hasPrefix($0) }, "\(testCase.id): \(message)")
        }
    }
}
