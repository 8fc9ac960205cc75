// The journal's record checksum: zlib's CRC-32, by table and (on x86-64 with PCLMUL) folded in C. Both must give
// zlib's value for every length and alignment, or recovery would take good records for torn ones.
import Foundation
import Testing
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("CRC-32") struct CRC32Tests {
    static func crc(_ bytes: [UInt8], folding: Bool = true) -> UInt32 {
        bytes.withUnsafeBytes { CRC32.checksum($0, folding: folding) }
    }

    @Test("zlib's values: the check string, short texts, 64 and 80 bytes, and longer patterned buffers")
    func knownValues() {
        let cases: [([UInt8], UInt32)] = [
            ([], 0),
            (Array("a".utf8), 0xE8B7_BE43),
            (Array("123456789".utf8), 0xCBF4_3926),
            (Array("The quick brown fox jumps over the lazy dog".utf8), 0x414F_A339),
            ([UInt8](repeating: 0, count: 64), 0x758D_6336),
            ([UInt8](repeating: 255, count: 80), 0x85C1_90EA),
            // Values from Python's zlib.crc32.
            ((0..<300).map { UInt8(($0 * 7 + 3) % 251) }, 0x2252_EC72),
            ((0..<4099).map { UInt8(($0 * 131 + 17) % 256) }, 0x9DB2_2205),
        ]
        for (bytes, expected) in cases {
            #expect(Self.crc(bytes) == expected, "\(bytes.count) bytes, folded")
            #expect(Self.crc(bytes, folding: false) == expected, "\(bytes.count) bytes, table only")
        }
    }

    @Test("folded and table agree at every length to 1,100 bytes and every start offset within 16")
    func foldedMatchesTable() {
        var generator = SystemRandomNumberGenerator()
        let pool = (0..<1_200).map { _ in UInt8.random(in: 0...255, using: &generator) }
        pool.withUnsafeBytes { all in
            for offset in 0..<16 {
                for length in 0...(1_100) {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let folded = CRC32.checksum(slice, folding: true)
                    let table = CRC32.checksum(slice, folding: false)
                    if folded != table {
                        Issue.record("offset \(offset), length \(length): folded \(folded), table \(table)")
                        return
                    }
                }
            }
        }
    }

    @Test("on an x86-64 CPU with PCLMUL the fold is taken, so the comparisons above test it")
    func foldTakenWhereTheCPUHasIt() throws {
        #if arch(x86_64) && os(Linux)
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
        let has = flags.split(separator: " ").contains("pclmulqdq") && flags.split(separator: " ").contains("sse4_1")
        #expect(CRC32.folds == has)
        #else
        #expect(!CRC32.folds)
        #endif
    }

    @Test("a changed byte anywhere changes the folded checksum")
    func everyByteCounts() {
        let bytes = (0..<256).map { UInt8($0) }
        let base = Self.crc(bytes)
        for i in bytes.indices {
            var changed = bytes
            changed[i] ^= 0x01
            #expect(Self.crc(changed) != base, "byte \(i)")
        }
    }
}
