// A small JSON object writer for journal records: keys in the order written, compact, one line.
// Never emits invalid JSON and never writes a path lossily: non-UTF-8 bytes also go out as base64.

struct JSONWriter {
    private(set) var bytes: [UInt8] = [0x7B]
    private var empty = true

    /// Room for a typical record up front: appends then never regrow the buffer field by field.
    init() { bytes.reserveCapacity(384) }

    /// The finished object, `{...}`.
    var finished: [UInt8] { bytes + [0x7D] }

    /// Appends the finished object to `out` without building it first.
    func appendFinished(to out: inout [UInt8]) {
        out.append(contentsOf: bytes)
        out.append(0x7D)
    }

    // Keys are literals: written as they are, never scanned for escapes (none of them needs one).
    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        JSONWriter.appendString(value, to: &bytes)
    }

    mutating func string(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) } else { null(key) }
    }

    mutating func int(_ key: StaticString, _ value: some BinaryInteger) {
        self.key(key)
        JSONWriter.appendInteger(value, to: &bytes)
    }

    /// A key known only at run time (the commit record's count names): escaped like any string.
    mutating func int(named key: String, _ value: some BinaryInteger) {
        if !empty { bytes.append(0x2C) }
        empty = false
        JSONWriter.appendString(key, to: &bytes)
        bytes.append(0x3A)
        JSONWriter.appendInteger(value, to: &bytes)
    }

    mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null(_ key: StaticString) {
        self.key(key)
        bytes.append(contentsOf: "null".utf8)
    }

    /// A path as `key` (text) plus `keyBase64` when its bytes are not valid UTF-8.
    mutating func path(_ key: StaticString, _ value: RelativePath) {
        self.key(key)
        // Printable ASCII without quote or backslash (nearly every path): the bytes are the JSON string's.
        if value.bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
            bytes.append(0x22)
            bytes.append(contentsOf: value.bytes)
            bytes.append(0x22)
            return
        }
        JSONWriter.appendString(value.string, to: &bytes)
        if !value.isValidUTF8 {
            self.key(key, suffix: "Base64")
            JSONWriter.appendString(value.base64, to: &bytes)
        }
    }

    /// Bytes as `key` when they are UTF-8 text, else as `keyBase64`; nil writes `key: null`.
    mutating func blob(_ key: StaticString, _ value: [UInt8]?) {
        guard let value else { null(key); return }
        if let text = String(validating: value, as: UTF8.self) {
            string(key, text)
        } else {
            self.key(key, suffix: "Base64")
            JSONWriter.appendString(Base64.encode(value), to: &bytes)
        }
    }

    mutating func object(_ key: StaticString, _ value: JSONWriter) {
        self.key(key)
        bytes.append(contentsOf: value.finished)
    }

    mutating func integers(_ key: StaticString, _ values: [Int]) {
        self.key(key)
        bytes.append(0x5B)
        for (i, v) in values.enumerated() {
            if i > 0 { bytes.append(0x2C) }
            JSONWriter.appendInteger(v, to: &bytes)
        }
        bytes.append(0x5D)
    }

    private mutating func key(_ key: StaticString, suffix: StaticString = "") {
        if !empty { bytes.append(0x2C) }
        empty = false
        bytes.append(0x22)
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        if suffix.utf8CodeUnitCount > 0 {
            bytes.append(contentsOf: UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount))
        }
        bytes.append(0x22)
        bytes.append(0x3A)
    }

    /// Decimal digits, without building a String (one per journal record field).
    static func appendInteger(_ value: some BinaryInteger, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        var magnitude = UInt64(value.magnitude)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = 20
            repeat {
                n -= 1
                digits[n] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n...]))
        }
    }

    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        var text = s
        // Most strings (keys, paths, ids) need no escape: copied in one piece.
        let copied = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) else { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if !copied { appendEscaped(text, to: &out) }
        out.append(0x22)
    }

    private static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20, 0x7F:
                let digits = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, digits[Int(b >> 4)], digits[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
    }
}
