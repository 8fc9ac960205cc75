// Paths in the one JSON writer (Base/JSONWriter.swift): never written lossily, the exact bytes also as base64
// when they are not UTF-8. Here, not in Base/, because a RelativePath is a file-system value.

extension JSONWriter {
    /// A journal record's path: `key` (text) plus `keyBase64` when its bytes are not valid UTF-8.
    package mutating func path(_ key: StaticString, _ value: RelativePath) {
        // Printable ASCII without quote or backslash (nearly every path): the bytes are the JSON string's.
        let plain = value.bytes.withUnsafeBufferPointer { b -> Bool in
            guard JSONWriter.isPlain(b) else { return false }
            plainString(key, b)
            return true
        }
        if plain { return }
        self.key(key)
        string(value.string, escaping: .journal)
        if !value.isValidUTF8 {
            self.key(key, suffix: "Base64")
            string(value.base64, escaping: .journal)
        }
    }

    /// A plan's path: its bytes as they are when they are ASCII (no String made), else the lossy text form
    /// (the exact bytes go in the `...Base64` field the plan writes next to it).
    package mutating func string(path: RelativePath) {
        if path.isASCII {
            path.bytes.withUnsafeBufferPointer { string(bytes: $0) }
        } else {
            string(path.string)
        }
    }
}

extension RelativePath {
    /// True when no byte has its high bit set, tested eight bytes at a time.
    package var isASCII: Bool {
        bytes.withUnsafeBytes { raw in
            var i = 0
            var high: UInt64 = 0
            while i + 8 <= raw.count {
                high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < raw.count { high |= UInt64(raw[i]); i += 1 }
            return high & 0x8080_8080_8080_8080 == 0
        }
    }

    /// What a JSON string can carry exactly: ASCII, or valid UTF-8.
    package var isUTF8: Bool { isASCII || isValidUTF8 }
}
