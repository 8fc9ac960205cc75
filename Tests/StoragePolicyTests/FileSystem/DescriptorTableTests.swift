// The descriptor table the command grows at start (system_reserveDescriptorTable): it holds the asked count
// afterwards, and nothing is left open.
import Foundation
import Testing
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Descriptor table reserved at start")
struct DescriptorTableTests {
    /// The kernel's size of this process's descriptor table (FDSize in /proc/self/status).
    static func tableSize() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("FDSize:") })
        return try #require(Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces)))
    }

    static func openCount() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }

    @Test("the table holds the asked count afterwards and no descriptor is left open",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
    func growsTheTable() throws {
        let before = try Self.tableSize()
        let limit = try #require(system_openFileLimit())
        let asked = 2 * before
        try #require(limit.unlimited || Int(limit.soft) >= asked, "the soft RLIMIT_NOFILE is below \(asked)")
        let open = try Self.openCount()
        system_reserveDescriptorTable(asked)
        #expect(try Self.tableSize() >= asked)
        #expect(try Self.openCount() == open)
    }
}
