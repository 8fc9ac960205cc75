// The journal's per-record checksums. Records are written with CRC-32 (8 hex digits, zlib's CRC, as
// `python3 -c 'import zlib'` or `crc32(1)` print it): cheap enough to take for every intent. Journals written
// before it carry the first 16 hex digits of the body's SHA-256 (the `sum` frame): those are still read, so a
// transaction an older policyctl left unfinished is recovered.

@_spi(Layers) import StoragePolicyFileSystem

package enum JournalChecksum {
    /// The 8 lowercase hex digits of CRC-32(`bytes`): the `crc` frame.
    static func crc(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        CRC32.appendHex(CRC32.checksum(bytes), to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The first 16 lowercase hex digits of SHA-256(`bytes`): the older `sum` frame.
    package static func prefix(_ bytes: some Collection<UInt8>) -> String {
        String(SHA256.hex(bytes).prefix(16))
    }
}
