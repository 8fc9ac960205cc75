// CRC-32 as zlib, gzip and PNG compute it (the IEEE 802.3 polynomial, reflected, 0xEDB88320), eight bytes a
// step by table (slicing-by-8): the journal's per-record checksum, about a tenth of SHA-256's cost per byte. It catches
// torn and overwritten lines; it is no defence against a forger, and need not be (the journal's owner and mode
// are checked before a record is read: Docs/safety.md). Where the CPU has carry-less multiplication (x86-64
// with PCLMUL), C folds the bulk of the bytes sixteen at a time (CPosix's CRC32.c) and the table does the rest.
internal import CPosix

package enum CRC32 {
    /// Eight tables of 256 entries, one after the other: entry `k * 256 + b` is the CRC of byte `b` followed by
    /// `k` zero bytes. One flat block read through a pointer: a buffer's subscript checks its bounds, eight checks
    /// per eight bytes, which made the checksum cost six instructions a byte (a file delete's intent record is about
    /// 190 bytes). Made once, never freed.
    // Written only by the lazy initializer (run once, under its lock), read-only after: safe to share.
    nonisolated(unsafe) private static let flat: UnsafePointer<UInt32> = {
        let t = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for b in 0..<256 {
            var c = UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[b] = c
        }
        for k in 1..<8 {
            for b in 0..<256 {
                let previous = t[(k - 1) * 256 + b]
                t[k * 256 + b] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return UnsafePointer(t)
    }()

    /// `folding` false: the table alone, never the carry-less multiplication (the tests compare the two).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, folding: Bool = true) -> UInt32 {
        guard let start = bytes.baseAddress else { return 0 }
        let t = flat
        var crc: UInt32 = 0xFFFF_FFFF
        var p = start
        let end = start + bytes.count
        // On x86-64 with PCLMUL, all but the last 0 to 15 bytes (of 64 or more) are folded 16 at a time in C
        // (CPosix's CRC32.c): a file delete's intent record of about 250 bytes cost 850 instructions here.
        if folding { p += cposix_crc32_fold(&crc, start, bytes.count) }
        while end - p >= 8 {
            let low = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ crc
            let high = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
            p += 8
        }
        while p < end {
            crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
            p += 1
        }
        return ~crc
    }

    package static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return crc }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }

    /// Whether this process folds with carry-less multiplication (x86-64 with PCLMUL and SSE4.1), or uses the table only.
    package static var folds: Bool {
        var crc: UInt32 = 0
        return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            return cposix_crc32_fold(&crc, bytes.baseAddress!, 64) == 64
        }
    }

    /// The checksum as 8 lowercase hex digits, as `printf '%08x'` prints it.
    package static func appendHex(_ crc: UInt32, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: 8, alignment: 1) { digits in
            writeHex(crc, to: digits)
            out.append(contentsOf: digits)
        }
    }

    /// The 8 hex digits written in place (`out` holds exactly 8 bytes).
    package static func writeHex(_ crc: UInt32, to out: UnsafeMutableRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        for i in 0..<8 { out[i] = digits.utf8Start[Int((crc >> UInt32(28 - 4 * i)) & 0xF)] }
    }
}
