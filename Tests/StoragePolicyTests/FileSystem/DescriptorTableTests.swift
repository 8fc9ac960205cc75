// The descriptor table the command grows at start (system_reserveDescriptorTable): it holds the asked count
// afterwards, and nothing is left open.
import Foundation
import Testing
import TreeFixture
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Descriptor table reserved at start")
struct DescriptorTableTests {
    /// The kernel's size of this process's descriptor table (FDSize in /proc/self/status).
    static func tableSize() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("FDSize:") })
        return try #require(Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces)))
    }

    @Test("the table holds the asked count afterwards, and the descriptor that grew it is closed again",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
    func growsTheTable() throws {
        let before = try Self.tableSize()
        let limit = try #require(system_openFileLimit())
        let asked = 2 * before
        try #require(limit.unlimited || Int(limit.soft) >= asked, "the soft RLIMIT_NOFILE is below \(asked)")
        // The copy lands at the lowest free descriptor from asked - 1: that one, as the table ends below it. Only
        // it is looked at, not the count of open descriptors, which the suite's other tests change meanwhile.
        let top = Int32(asked - 1)
        try #require(fcntl(top, F_GETFD) == -1, "descriptor \(top) is already open")
        system_reserveDescriptorTable(asked)
        #expect(try Self.tableSize() >= asked)
        #expect(fcntl(top, F_GETFD) == -1 && errno == EBADF)
    }
}
