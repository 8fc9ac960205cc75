// The journal's per-record checksum: the first 16 hex digits of the SHA-256 of the record body, the same
// digest `sha256sum` prints. Short enough to keep records readable, long enough to catch a torn line.

enum JournalChecksum {
    /// The first 16 lowercase hex digits of SHA-256(`bytes`).
    static func prefix(_ bytes: some Collection<UInt8>) -> String {
        String(SHA256.hex(bytes).prefix(16))
    }
}
