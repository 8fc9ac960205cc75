// A small JSON object writer for journal records: keys in the order written, compact, one line.
// Never emits invalid JSON and never writes a path lossily: non-UTF-8 bytes also go out as base64.
// Apply writes one record per change, so the writer is a plain byte buffer written through a pointer
// (an Array append costs a uniqueness and capacity check per call); it is noncopyable, so it owns its bytes.

struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 1
    private var capacity: Int
    private var empty = true

    /// Room for a typical record up front: fields then never regrow the buffer one by one.
    init() {
        capacity = 384
        base = .allocate(capacity: capacity)
        base[0] = 0x7B
    }

    deinit { base.deallocate() }

    /// The bytes written so far (the object without its closing brace).
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The finished object, `{...}`.
    var finished: [UInt8] { bytes + [0x7D] }

    /// Appends the finished object to `out` without building it first.
    func appendFinished(to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        out.append(0x7D)
    }

    // Keys are literals: written as they are, never scanned for escapes (none of them needs one).
    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        appendString(value)
    }

    mutating func string(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) } else { null(key) }
    }

    mutating func int(_ key: StaticString, _ value: some BinaryInteger) {
        self.key(key)
        appendInteger(value)
    }

    /// A key known only at run time (the commit record's count names): escaped like any string.
    mutating func int(named key: String, _ value: some BinaryInteger) {
        if !empty { appendByte(0x2C) }
        empty = false
        appendString(key)
        appendByte(0x3A)
        appendInteger(value)
    }

    mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        append(value ? "true" : "false")
    }

    mutating func null(_ key: StaticString) {
        self.key(key)
        append("null")
    }

    /// A path as `key` (text) plus `keyBase64` when its bytes are not valid UTF-8.
    mutating func path(_ key: StaticString, _ value: RelativePath) {
        self.key(key)
        // Printable ASCII without quote or backslash (nearly every path): the bytes are the JSON string's.
        let plain = value.bytes.withUnsafeBufferPointer { b -> Bool in
            guard b.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else { return false }
            appendQuoted(b)
            return true
        }
        if plain { return }
        appendString(value.string)
        if !value.isValidUTF8 {
            self.key(key, suffix: "Base64")
            appendString(value.base64)
        }
    }

    /// Bytes as `key` when they are UTF-8 text, else as `keyBase64`; nil writes `key: null`.
    mutating func blob(_ key: StaticString, _ value: [UInt8]?) {
        guard let value else { null(key); return }
        if let text = String(validating: value, as: UTF8.self) {
            string(key, text)
        } else {
            self.key(key, suffix: "Base64")
            appendString(Base64.encode(value))
        }
    }

    mutating func object(_ key: StaticString, _ value: borrowing JSONWriter) {
        self.key(key)
        reserve(value.count + 1)
        (base + count).update(from: value.base, count: value.count)
        count += value.count
        appendByte(0x7D)
    }

    mutating func integers(_ key: StaticString, _ values: [Int]) {
        self.key(key)
        appendByte(0x5B)
        for (i, v) in values.enumerated() {
            if i > 0 { appendByte(0x2C) }
            appendInteger(v)
        }
        appendByte(0x5D)
    }

    // MARK: Bytes

    /// Makes room for `n` more bytes.
    private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let grown = max(capacity * 2, count + n)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        new.update(from: base, count: count)
        base.deallocate()
        base = new
        capacity = grown
    }

    private mutating func appendByte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    private mutating func append(_ s: StaticString) {
        let n = s.utf8CodeUnitCount
        reserve(n)
        (base + count).update(from: s.utf8Start, count: n)
        count += n
    }

    private mutating func key(_ key: StaticString, suffix: StaticString = "") {
        let k = key.utf8CodeUnitCount, x = suffix.utf8CodeUnitCount
        reserve(k + x + 4)
        if !empty {
            base[count] = 0x2C
            count += 1
        }
        empty = false
        base[count] = 0x22
        (base + count + 1).update(from: key.utf8Start, count: k)
        if x > 0 { (base + count + 1 + k).update(from: suffix.utf8Start, count: x) }
        base[count + 1 + k + x] = 0x22
        base[count + 2 + k + x] = 0x3A
        count += k + x + 3
    }

    /// Decimal digits, without building a String (one per journal record field).
    private mutating func appendInteger(_ value: some BinaryInteger) {
        reserve(21)
        if value < 0 {
            base[count] = 0x2D
            count += 1
        }
        var magnitude = UInt64(value.magnitude)
        var digits = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var i = count + digits
        repeat {
            i -= 1
            base[i] = 0x30 + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }

    private mutating func appendString(_ s: String) {
        var text = s
        // Most strings (keys, paths, ids) need no escape: copied in one piece.
        let copied = text.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) else { return false }
            appendQuoted(utf8)
            return true
        }
        if !copied { appendEscaped(text) }
    }

    /// `"bytes"`, for bytes the caller knows need no escape.
    private mutating func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count + 2)
        base[count] = 0x22
        if let source = bytes.baseAddress { (base + count + 1).update(from: source, count: bytes.count) }
        base[count + 1 + bytes.count] = 0x22
        count += bytes.count + 2
    }

    private mutating func appendEscaped(_ s: String) {
        appendByte(0x22)
        let hex: StaticString = "0123456789abcdef"
        for b in s.utf8 {
            switch b {
            case 0x22: appendByte(0x5C); appendByte(0x22)
            case 0x5C: appendByte(0x5C); appendByte(0x5C)
            case 0x0A: appendByte(0x5C); appendByte(0x6E)
            case 0x0D: appendByte(0x5C); appendByte(0x72)
            case 0x09: appendByte(0x5C); appendByte(0x74)
            case 0..<0x20, 0x7F:
                append("\\u00")
                appendByte(hex.utf8Start[Int(b >> 4)])
                appendByte(hex.utf8Start[Int(b & 0xF)])
            default: appendByte(b)
            }
        }
        appendByte(0x22)
    }
}
