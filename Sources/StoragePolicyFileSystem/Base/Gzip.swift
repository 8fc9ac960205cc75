// gzip (RFC 1952) of whole buffers, through zlib in CPosix/Gzip.c: the journal's rotated history files are
// written with it and read back with it. Never more than `limit` bytes out, so a hostile file cannot exhaust memory.
internal import CPosix

package enum Gzip {
    /// `bytes` as a gzip file's contents; nil when zlib fails (out of memory).
    package static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var out: UnsafeMutableRawPointer? = nil
        var count = 0
        let status = bytes.withUnsafeBytes { raw in cposix_gzip(raw.baseAddress, raw.count, &out, &count) }
        return take(status, out, count)
    }

    /// The contents of a gzip file; nil when it is damaged, truncated, or would be larger than `limit`.
    package static func decompress(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        var out: UnsafeMutableRawPointer? = nil
        var count = 0
        let status = bytes.withUnsafeBytes { raw in cposix_gunzip(raw.baseAddress, raw.count, limit, &out, &count) }
        return take(status, out, count)
    }

    private static func take(_ status: Int32, _ out: UnsafeMutableRawPointer?, _ count: Int) -> [UInt8]? {
        guard status == 0, let out else { return nil }
        defer { system_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: count))
    }
}
