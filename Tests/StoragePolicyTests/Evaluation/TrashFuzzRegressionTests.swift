// Regression cases for the trash date fuzz target (`Fuzz/run.sh trash`): the seed corpus and every input it
// ever flagged, each read as a .trashinfo, a DeletionDate and a trash stamp with the target's own checks.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyEvaluation

@Suite("Trash date fuzz regressions")
struct TrashFuzzRegressionTests {
    /// The repository, found from this file's path (Tests/StoragePolicyTests/Evaluation/).
    static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let inputs: [String] = {
        var files: [String] = []
        for folder in ["Fuzz/TrashCorpus", "Fuzz/TrashRegressions"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: repository + "/" + folder)) ?? []
            files += names.sorted().filter { !$0.hasPrefix(".") }.map { folder + "/" + $0 }
        }
        return files
    }()

    @Test("the seed corpus and the regressions are there")
    func present() {
        #expect(Self.inputs.filter { $0.hasPrefix("Fuzz/TrashCorpus/") }.count >= 10)
        #expect(Self.inputs.contains("Fuzz/TrashRegressions/issue-19-overflow.trashinfo"))
    }

    @Test("each input: no trap; a UTC date prints back as itself; a stamp round-trips its whole seconds")
    func checks() throws {
        for file in Self.inputs {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.repository + "/" + file)))
            Self.check(bytes, file)
            // The same with the bytes as one DeletionDate value, as the fuzzer's mutations often reach.
            Self.check(Array("[Trash Info]\nDeletionDate=".utf8) + bytes, file + " (as a value)")
        }
    }

    @Test("known answers for the kept regressions")
    func answers() {
        #expect(TrashDates.read(trashInfo: Array("[Trash Info]\nDeletionDate=9999-12-31T23:59:59\n".utf8))
                == .unreadable(Array("9999-12-31T23:59:59".utf8)))
        #expect(TrashDates.stamp(Array("18446744073709551616".utf8)) == nil)
    }

    /// What Fuzz/TrashDatesFuzz.swift checks, as expectations.
    static func check(_ bytes: [UInt8], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if case .date(let t) = TrashDates.read(trashInfo: bytes) { _ = WallClock.rfc3339(ns: t) }
        _ = TrashDates.read(trashInfo: bytes).problem
        _ = TrashFolder.originalPath(inTrashInfo: bytes)
        #expect(TrashFolder.percentDecoded(TrashFolder.percentEncoded(bytes)) == bytes, "\(label)", sourceLocation: sourceLocation)
        if let t = TrashDates.stamp(bytes) {
            #expect(t >= 0, "\(label)", sourceLocation: sourceLocation)
            let whole = t / 1_000_000_000
            #expect(TrashDates.stamp(Array(String(whole).utf8)) == whole * 1_000_000_000, "\(label)", sourceLocation: sourceLocation)
        }
        if let t = TrashDates.parseDate(bytes), bytes.count == 20, bytes.last == 0x5A {
            #expect(WallClock.rfc3339(ns: t) == String(decoding: bytes, as: UTF8.self), "\(label)", sourceLocation: sourceLocation)
        }
    }
}
