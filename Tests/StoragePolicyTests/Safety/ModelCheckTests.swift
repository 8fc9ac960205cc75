// The journal protocol's model (Docs/model/journal.pml), checked exhaustively by spin: every interleaving of two
// racing runs, a co-tenant and crashes at every step (recovery included) keeps every unit before or after,
// finishes file deletes and harms nothing outside the plan; the seeded bugs must be found, so the check can fail.
import Foundation
import Testing

@Suite("Model check of the journal protocol (spin)")
struct ModelCheckTests {
    static let model = String(#filePath).components(separatedBy: "/Tests/")[0] + "/Docs/model/journal.pml"
    /// The quarantine's move, undo and purge (issue 50).
    static let quarantineModel = String(#filePath).components(separatedBy: "/Tests/")[0] + "/Docs/model/quarantine.pml"

    /// The tool's path, or nil when it is not installed (the test is then skipped, saying why).
    static func tool(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static let available: Bool = tool("spin") != nil && tool("gcc") != nil

    struct Outcome {
        var status: Int32
        var output: String
    }

    static func run(_ tool: String, _ arguments: [String], in directory: String) throws -> Outcome {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Outcome(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// spin -a (with `defines`), gcc -DSAFETY, ./pan to completion: the verifier's output.
    static func verify(_ defines: [String], model: String = ModelCheckTests.model) throws -> String {
        let dir = NSTemporaryDirectory() + "policyctl-model-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spin = try run(tool("spin")!, defines + ["-a", model], in: dir)
        #expect(spin.status == 0, "spin -a: \(spin.output)")
        let gcc = try run(tool("gcc")!, ["-O1", "-DSAFETY", "-o", "pan", "pan.c"], in: dir)
        #expect(gcc.status == 0, "gcc: \(gcc.output)")
        return try run(dir + "/pan", [], in: dir).output
    }

    static func errors(in output: String) -> Int? {
        guard let range = output.range(of: "errors: ") else { return nil }
        return Int(output[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("the protocol keeps every unit before or after, finishes file deletes, harms nothing outside the plan: errors 0",
          .enabled(if: available, "spin or gcc is not installed (apt-get install -y spin gcc): the model is not checked"))
    func modelHolds() throws {
        let output = try Self.verify([])
        #expect(Self.errors(in: output) == 0, "\(output)")
        // A search cut short proves nothing: pan must have explored everything.
        #expect(output.contains("Full statespace search"), "\(output)")
        #expect(!output.contains("max search depth too small"), "\(output)")
    }

    @Test("the seeded bugs are found: a .trashinfo rolled forward alone, and the purge before the commit",
          .enabled(if: available, "spin or gcc is not installed (apt-get install -y spin gcc): the model is not checked"),
          arguments: ["-DSEEDED_BUG", "-DSEEDED_PURGE"])
    func seededBugFails(define: String) throws {
        let output = try Self.verify([define])
        #expect((Self.errors(in: output) ?? 0) > 0, "\(define): \(output)")
        #expect(output.contains("assertion violated"), "\(output)")
    }

    @Test("the quarantine keeps a held delete in one place, undoes and purges before or after, never into a swapped folder: errors 0",
          .enabled(if: available, "spin or gcc is not installed (apt-get install -y spin gcc): the model is not checked"))
    func quarantineModelHolds() throws {
        let output = try Self.verify([], model: Self.quarantineModel)
        #expect(Self.errors(in: output) == 0, "\(output)")
        #expect(output.contains("Full statespace search"), "\(output)")
        #expect(!output.contains("max search depth too small"), "\(output)")
    }

    @Test("the quarantine's seeded bugs are found: a purge before its intent, a restore into any folder, an undo before its intent",
          .enabled(if: available, "spin or gcc is not installed (apt-get install -y spin gcc): the model is not checked"),
          arguments: ["-DSEEDED_PURGE_EARLY", "-DSEEDED_NO_FOLDER_CHECK", "-DSEEDED_UNDO_EARLY"])
    func quarantineSeededBugFails(define: String) throws {
        let output = try Self.verify([define], model: Self.quarantineModel)
        #expect((Self.errors(in: output) ?? 0) > 0, "\(define): \(output)")
        #expect(output.contains("assertion violated"), "\(output)")
    }
}
