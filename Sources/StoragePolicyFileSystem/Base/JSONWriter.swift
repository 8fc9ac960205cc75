// The engine's one JSON writer: a byte buffer written through a pointer (an Array append costs a uniqueness and
// capacity check per call), noncopyable so it owns its bytes. Two ways to use it:
// - a compact object, one line, keys in the order written: `JSONWriter()` and the keyed methods (journal records);
// - pieces (`literal`, `indent`, `integer`, `string`) that a structured writer puts together, as PlanJSONWriter
//   writes pretty JSON in the layout JSONEncoder's `.prettyPrinted` gives.
// Strings are escaped the way each output has always been escaped (`Escaping`), so no output changes bytes.
// Never emits invalid JSON. Standard library only: no Foundation on the paths that write plans and journals.

/// SPI-public so its small pieces (`literal`, `byte`, `bytes`, `reserve`) inline into the plan writer of the layer
/// above, as ConditionLocked explains; the rest is `package`.
@_spi(Layers) public struct JSONWriter: ~Copyable {
    /// How a string's bytes are escaped. Every style escapes `"`, `\` and control characters; they differ
    /// only where the outputs that use them always have.
    package enum Escaping {
        /// As JSONEncoder writes (plans, reports): `\b \f \n \r \t`, other controls `\u00xx`, DEL as it is.
        case encoder
        /// As JSONEncoder writes without `.withoutEscapingSlashes` (plan records): `/` also as `\/`.
        case encoderEscapingSlashes
        /// As journal records have been written since their first version: `\n \r \t`, every other control
        /// and DEL `\u00xx`.
        case journal
    }

    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    /// Bytes written so far.
    package var count: Int { used }
    @usableFromInline var used: Int
    /// No field written yet (compact objects only).
    private var empty = true

    /// A compact object (its `{` written), with room for a typical journal record up front: fields then never
    /// regrow the buffer one by one.
    package init() {
        capacity = 384
        base = .allocate(capacity: capacity)
        base[0] = 0x7B
        used = 1
    }

    /// An empty buffer for pieces, with room for `capacity` bytes before it grows.
    package init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        used = 0
    }

    deinit { base.deallocate() }

    // MARK: A compact object

    /// The bytes written so far (the object without its closing brace).
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// The finished object, `{...}`.
    package var finished: [UInt8] { bytes + [0x7D] }

    /// Appends the finished object to `out` without building it first.
    package func appendFinished(to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: used))
        out.append(0x7D)
    }

    /// A compact object's `{` written into a buffer of pieces, its first field next: records written one after
    /// the other straight into one buffer (the journal's pending group), each without a writer of its own.
    package mutating func beginObject() {
        byte(0x7B)
        empty = true
    }

    /// `other`'s finished object, `{...}`, appended.
    package mutating func append(finished other: borrowing JSONWriter) {
        bytes(other.base, other.used)
        byte(0x7D)
    }

    /// The bytes written so far, lent to be changed in place (a checksum written where it was left room for).
    package mutating func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: used))
    }

    // Keys are literals: written as they are, never scanned for escapes (none of them needs one).
    package mutating func string(_ key: StaticString, _ value: String, escaping: Escaping = .journal) {
        self.key(key)
        string(value, escaping: escaping)
    }

    /// `key` with a literal value that needs no escaping (a change's or a file type's name): the same bytes as
    /// `string`, without going through a String (a record of each delete names two).
    package mutating func literalString(_ key: StaticString, _ value: StaticString) {
        self.key(key)
        byte(0x22)
        literal(value)
        byte(0x22)
    }

    /// `key` with bytes the caller knows need no escaping (printable ASCII without `"` or `\`), copied as they
    /// are: the same bytes as `string`, without scanning them again.
    package mutating func plainString(_ key: StaticString, _ value: UnsafeBufferPointer<UInt8>) {
        self.key(key)
        byte(0x22)
        if let start = value.baseAddress { bytes(start, value.count) }
        byte(0x22)
    }

    package mutating func string(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) } else { null(key) }
    }

    @inlinable @inline(__always)
    package mutating func int(_ key: StaticString, _ value: some BinaryInteger) {
        self.key(key)
        integer(value)
    }
    package mutating func int(_ key: StaticString, _ value: Int) { self.key(key); integer(value) }
    package mutating func int(_ key: StaticString, _ value: Int64) { self.key(key); integer(value) }
    package mutating func int(_ key: StaticString, _ value: UInt64) { self.key(key); integer(value) }
    package mutating func int(_ key: StaticString, _ value: UInt32) { self.key(key); integer(value) }
    package mutating func int(_ key: StaticString, _ value: Int32) { self.key(key); integer(value) }

    /// A key known only at run time (the commit record's count names): escaped like any string.
    @inlinable @inline(__always)
    package mutating func int(named key: String, _ value: some BinaryInteger) {
        self.key(named: key)
        integer(value)
    }

    /// `,"key":` for a key known only at run time, escaped like any string.
    @usableFromInline package mutating func key(named key: String) {
        if !empty { byte(0x2C) }
        empty = false
        string(key, escaping: .journal)
        byte(0x3A)
    }

    package mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        literal(value ? "true" : "false")
    }

    package mutating func null(_ key: StaticString) {
        self.key(key)
        literal("null")
    }

    /// Bytes as `key` when they are UTF-8 text, else as `keyBase64`; nil writes `key: null`.
    package mutating func blob(_ key: StaticString, _ value: [UInt8]?) {
        guard let value else { null(key); return }
        if let text = String(validating: value, as: UTF8.self) {
            string(key, text)
        } else {
            self.key(key, suffix: "Base64")
            string(Base64.encode(value), escaping: .journal)
        }
    }

    package mutating func object(_ key: StaticString, _ value: borrowing JSONWriter) {
        self.key(key)
        reserve(value.count + 1)
        (base + used).update(from: value.base, count: value.count)
        used += value.count
        byte(0x7D)
    }

    package mutating func integers(_ key: StaticString, _ values: [Int]) {
        self.key(key)
        byte(0x5B)
        for (i, v) in values.enumerated() {
            if i > 0 { byte(0x2C) }
            integer(v)
        }
        byte(0x5D)
    }

    /// Fields joined in one literal, keys and literal values alike (`"change":"unlink","path":`), the comma first
    /// unless they are the object's first: a record written per file delete copies its known text in a few pieces
    /// instead of a call and two copies per key. Fields after it go on with literals that begin with their comma.
    package mutating func fields(_ text: StaticString) {
        if !empty { byte(0x2C) }
        empty = false
        literal(text)
    }

    /// `,"key":` (`,"keySuffix":`), the comma unless it is the first field.
    @usableFromInline package mutating func key(_ key: StaticString, suffix: StaticString = "") {
        let k = key.utf8CodeUnitCount, x = suffix.utf8CodeUnitCount
        reserve(k + x + 4)
        if !empty {
            base[used] = 0x2C
            used += 1
        }
        empty = false
        base[used] = 0x22
        (base + used + 1).update(from: key.utf8Start, count: k)
        if x > 0 { (base + used + 1 + k).update(from: suffix.utf8Start, count: x) }
        base[used + 1 + k + x] = 0x22
        base[used + 2 + k + x] = 0x3A
        used += k + x + 3
    }

    // MARK: Pieces

    /// Makes room for `n` more bytes.
    @inlinable @inline(__always)
    public mutating func reserve(_ n: Int) {
        if used + n > capacity { grow(n) }
    }

    @usableFromInline mutating func grow(_ n: Int) {
        let grown = max(capacity * 2, used + n)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        new.update(from: base, count: used)
        base.deallocate()
        base = new
        capacity = grown
    }

    @inlinable @inline(__always)
    public mutating func byte(_ b: UInt8) {
        reserve(1)
        base[used] = b
        used += 1
    }

    @inlinable @inline(__always)
    public mutating func bytes(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        (base + used).update(from: bytes, count: n)
        used += n
    }

    /// Literal JSON text (punctuation, keys known to need no escape, `true`).
    @inlinable @inline(__always)
    public mutating func literal(_ s: StaticString) {
        // A one-character literal may be stored as a scalar, without a pointer to its bytes.
        if s.hasPointerRepresentation {
            bytes(s.utf8Start, s.utf8CodeUnitCount)
        } else {
            s.withUTF8Buffer { bytes($0.baseAddress!, $0.count) }
        }
    }

    /// Two spaces per level.
    package mutating func indent(_ level: Int) {
        reserve(level * 2)
        (base + used).update(repeating: 0x20, count: level * 2)
        used += level * 2
    }

    /// Decimal digits of any integer. The concrete overloads below are what callers in other layers (the plan
    /// writer, journal records) get: a generic call across a target boundary is not specialised, and looking up
    /// `N`'s metadata and witnesses for every number cost plan 5 % of its instructions when the layers became
    /// targets (Docs/performance.md).
    @inlinable @inline(__always)
    package mutating func integer<N: BinaryInteger>(_ n: N) {
        decimal(negative: n < 0, magnitude: UInt64(n.magnitude))
    }
    package mutating func integer(_ n: Int) { decimal(negative: n < 0, magnitude: UInt64(n.magnitude)) }
    package mutating func integer(_ n: Int64) { decimal(negative: n < 0, magnitude: n.magnitude) }
    package mutating func integer(_ n: Int32) { decimal(negative: n < 0, magnitude: UInt64(n.magnitude)) }
    package mutating func integer(_ n: UInt64) { decimal(negative: false, magnitude: n) }
    package mutating func integer(_ n: UInt32) { decimal(negative: false, magnitude: UInt64(n)) }
    package mutating func integer(_ n: UInt16) { decimal(negative: false, magnitude: UInt64(n)) }

    /// Decimal digits straight into the buffer (no String per number), two at a time from the right.
    @usableFromInline package mutating func decimal(negative: Bool, magnitude: UInt64) {
        if negative { byte(0x2D) }
        var value = magnitude
        // The digit count first, so the digits go straight to their place: halving steps of comparisons (a
        // nanosecond time has 19 digits, which one comparison per digit took 19 steps to count).
        var digits = 1
        var rest = value
        if rest >= 10_000_000_000_000_000 { digits += 16; rest /= 10_000_000_000_000_000 }
        if rest >= 100_000_000 { digits += 8; rest /= 100_000_000 }
        if rest >= 10_000 { digits += 4; rest /= 10_000 }
        if rest >= 100 { digits += 2; rest /= 100 }
        if rest >= 10 { digits += 1 }
        reserve(digits)
        var at = base + used + digits
        let pairs = JSONWriter.pairs.utf8Start
        while value >= 100 {
            let pair = Int(value % 100) &* 2
            value /= 100
            at -= 2
            at[0] = pairs[pair]
            at[1] = pairs[pair + 1]
        }
        if value >= 10 {
            at -= 2
            at[0] = pairs[Int(value) &* 2]
            at[1] = pairs[Int(value) &* 2 + 1]
        } else {
            at -= 1
            at[0] = 0x30 + UInt8(value)
        }
        used += digits
    }

    /// "00" to "99", back to back.
    private static let pairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// A JSON string of `s`.
    package mutating func string(_ s: String, escaping: Escaping = .encoder) {
        var s = s
        s.withUTF8 { string(bytes: $0, escaping: escaping) }
    }

    /// A JSON string of UTF-8 bytes: quoted, escaped as `escaping` says, everything else as it is.
    package mutating func string(bytes: UnsafeBufferPointer<UInt8>, escaping: Escaping = .encoder) {
        byte(0x22)
        guard let source = bytes.baseAddress else { byte(0x22); return }
        let n = bytes.count
        var start = 0
        var i = 0
        while i < n {
            // Eight bytes at a time while none of them needs escaping: most strings are copied in one piece.
            if i + 8 <= n, !JSONWriter.needsEscape(UnsafeRawPointer(source + i).loadUnaligned(as: UInt64.self), escaping) {
                i += 8
                continue
            }
            let b = source[i]
            i += 1
            guard JSONWriter.needsEscape(b, escaping) else { continue }
            if start < i - 1 { self.bytes(source + start, i - 1 - start) }
            start = i
            escape(b, escaping)
        }
        if start < n { self.bytes(source + start, n - start) }
        byte(0x22)
    }

    @inline(__always)
    private static func needsEscape(_ b: UInt8, _ escaping: Escaping) -> Bool {
        if b == 0x22 || b == 0x5C || b < 0x20 { return true }
        switch escaping {
        case .encoder: return false
        case .encoderEscapingSlashes: return b == 0x2F
        case .journal: return b == 0x7F
        }
    }

    private mutating func escape(_ b: UInt8, _ escaping: Escaping) {
        let encoder = escaping != .journal
        switch b {
        case 0x22: byte(0x5C); byte(0x22)
        case 0x5C: byte(0x5C); byte(0x5C)
        case 0x2F: byte(0x5C); byte(0x2F)
        case 0x0A: byte(0x5C); byte(0x6E)
        case 0x0D: byte(0x5C); byte(0x72)
        case 0x09: byte(0x5C); byte(0x74)
        case 0x08 where encoder: byte(0x5C); byte(0x62)
        case 0x0C where encoder: byte(0x5C); byte(0x66)
        default:
            let d: StaticString = "0123456789abcdef"
            literal("\\u00")
            byte(d.utf8Start[Int(b >> 4)])
            byte(d.utf8Start[Int(b & 0xF)])
        }
    }

    /// True when every byte is printable ASCII other than `"` and `\`: the bytes are a JSON string's as they are,
    /// in every style. Eight bytes at a time (a path per file delete's record; a byte-by-byte test was a fifth of
    /// writing one).
    package static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        while i + 8 <= n {
            let w = UnsafeRawPointer(start + i).loadUnaligned(as: UInt64.self)
            if needsEscape(w, .journal) || w & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < n {
            let b = start[i]
            if b < 0x20 || b >= 0x7F || b == 0x22 || b == 0x5C { return false }
            i += 1
        }
        return true
    }

    /// True when one of the eight bytes needs escaping in this style (the classic zero-byte and less-than
    /// word tests, exact as a yes/no).
    @inline(__always)
    private static func needsEscape(_ w: UInt64, _ escaping: Escaping) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func has(_ c: UInt64) -> UInt64 { let x = w ^ (ones &* c); return (x &- ones) & ~x & highs }
        let control = (w &- ones &* 0x20) & ~w & highs
        var found = control | has(0x22) | has(0x5C)
        switch escaping {
        case .encoder: break
        case .encoderEscapingSlashes: found |= has(0x2F)
        case .journal: found |= has(0x7F)
        }
        return found != 0
    }

    // MARK: Handing bytes on

    /// The bytes written so far, read in place.
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: used))
    }

    /// The bytes written so far, handed over; the buffer starts empty again.
    package mutating func takeBytes() -> [UInt8] {
        defer { used = 0 }
        return bytes
    }

    /// Forgets what was written (keeps the memory).
    package mutating func removeAll() { used = 0 }
}
