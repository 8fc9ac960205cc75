// Regression cases for the journal fuzz target (`Fuzz/run.sh journal`): the seed corpus, every input it ever
// flagged, and 250 deterministic mutations of the seeds (checksums recomputed, as the target does). Each is
// read by `journal` and recovered twice on a scratch root: no crash, nothing outside the root changed.
import Foundation
import Testing
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyApply

@Suite("Journal fuzz regressions", .timeLimit(.minutes(10)))
struct JournalFuzzRegressionTests {
    static let seeds: [String] = {
        var files: [String] = []
        for folder in ["Fuzz/JournalCorpus", "Fuzz/JournalRegressions"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: FuzzRegressionTests.repository + "/" + folder)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") { files.append(folder + "/" + name) }
        }
        return files
    }()

    static func bytes(_ seed: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: FuzzRegressionTests.repository + "/" + seed)))
    }

    @Test("the journal seed corpus is there")
    func corpusPresent() {
        #expect(Self.seeds.filter { $0.hasPrefix("Fuzz/JournalCorpus/") }.count >= 7)
    }

    @Test("every journal seed and regression is read and recovered safely", arguments: seeds)
    func seed(_ seed: String) throws {
        #expect(JournalFuzzing.exercise(try Self.bytes(seed), scratch: "/tmp") == [], "\(seed)")
    }

    @Test("250 mutated journals (valid checksums): no crash, nothing outside the root changed, recovery closes")
    func mutations() throws {
        let seeds = try Self.seeds.map(Self.bytes)
        var rng = SplitMix64(seed: 0x5eed_1234)
        let extremes = ["9223372036854775807", "-9223372036854775808", "18446744073709551615", "-1", "0", "1e308", "4294967296", "null", "\"\"", "[]"]
        for i in 0..<250 {
            var input = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                guard !input.isEmpty else { break }
                let at = Int(rng.next() % UInt64(input.count))
                switch rng.next() % 4 {
                case 0:
                    // Replace the number (or whatever token) at `at` with an extreme value.
                    var end = at
                    while end < input.count, (0x30...0x39).contains(input[end]) || input[end] == 0x2D { end += 1 }
                    input.replaceSubrange(at..<max(end, at + 1), with: Array(extremes[Int(rng.next() % UInt64(extremes.count))].utf8))
                case 1: input[at] = UInt8(truncatingIfNeeded: rng.next())
                case 2: input.remove(at: at)
                default:
                    // Duplicate a line: replays, repeated seqs, two begins.
                    let lines = input.split(separator: 0x0A)
                    if let line = lines.randomElement(using: &rng) { input += [0x0A] + line }
                }
            }
            let problems = JournalFuzzing.exercise(input, scratch: "/tmp")
            #expect(problems == [], "mutation \(i): \(String(decoding: input, as: UTF8.self))")
        }
    }
}

