// Reads a journal record's body (one JSON object) straight from its bytes into a RecordBody: no Data, no
// JSONDecoder, no String per key. A journal of 130,000 records (32 MB) took two seconds through JSONDecoder;
// this reads it in a tenth of that (Docs/performance.md, "Reading the journal"). It is a trust boundary: every
// input is either a record whose fields have the types RecordBody declares, or nil (the caller names the line
// damaged). Never traps, never reads past the buffer, never recurses deeper than a small bound.

@_spi(Layers) import StoragePolicyFileSystem

extension RecordBody {
    /// The body parsed, or nil when it is not one JSON object whose known keys hold values of their types
    /// (unknown keys are skipped, as JSONDecoder skips them; `null` is an absent optional field).
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> RecordBody? {
        var parser = RecordParser(bytes)
        return parser.record()
    }

    package static func parse(_ bytes: ArraySlice<UInt8>) -> RecordBody? {
        bytes.withUnsafeBytes { parse($0) }
    }
}

/// One pass over one object. Strict where our writer is strict (integers only: no fraction, no exponent),
/// liberal in whitespace, as JSON allows.
private struct RecordParser {
    let b: UnsafeRawBufferPointer
    var i = 0

    init(_ bytes: UnsafeRawBufferPointer) { b = bytes }

    // MARK: Tokens

    @inline(__always) mutating func skipSpace() {
        while i < b.count {
            let c = b[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    @inline(__always) mutating func take(_ c: UInt8) -> Bool {
        skipSpace()
        guard i < b.count, b[i] == c else { return false }
        i += 1
        return true
    }

    /// `null`, consumed; false (nothing consumed) for anything else.
    mutating func null() -> Bool {
        skipSpace()
        guard i + 4 <= b.count, b[i] == 0x6E, b[i + 1] == 0x75, b[i + 2] == 0x6C, b[i + 3] == 0x6C else { return false }
        i += 4
        return true
    }

    /// The raw bytes of a string with no escapes (the common case), or nil when it has one (then `string()`).
    /// Position on the opening quote.
    mutating func plainString() -> UnsafeRawBufferPointer?? {
        skipSpace()
        guard i < b.count, b[i] == 0x22 else { return .none }
        var j = i + 1
        while j < b.count {
            let c = b[j]
            if c == 0x22 {
                let out = UnsafeRawBufferPointer(rebasing: b[(i + 1)..<j])
                i = j + 1
                return .some(out)
            }
            if c == 0x5C { return .some(nil) }
            if c < 0x20 { return .none }
            j += 1
        }
        return .none
    }

    /// True when `bytes` are valid UTF-8 (JSON text must be): ASCII at once, anything else checked.
    static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        isASCII(bytes) || String(validating: bytes, as: UTF8.self) != nil
    }

    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isUTF8($0) }
    }

    /// No byte above 0x7F: a plain loop over the pointer (no generic algorithm: a debug build ran those
    /// unspecialised, a third of reading a journal).
    @inline(__always) static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        var i = 0
        while i < bytes.count {
            if base[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// A JSON string as UTF-8 bytes, escapes decoded; nil when it is not a valid string (or not UTF-8).
    mutating func stringBytes() -> [UInt8]? {
        guard let bytes = rawStringBytes(), Self.isUTF8(bytes) else { return nil }
        return bytes
    }

    private mutating func rawStringBytes() -> [UInt8]? {
        switch plainString() {
        case .none: return nil
        case .some(let plain?): return Array(plain)
        case .some(nil): break
        }
        // With escapes: decoded byte by byte.
        guard b[i] == 0x22 else { return nil }
        i += 1
        var out: [UInt8] = []
        while i < b.count {
            let c = b[i]
            i += 1
            switch c {
            case 0x22: return out
            case 0x5C:
                guard i < b.count else { return nil }
                let e = b[i]
                i += 1
                switch e {
                case 0x22, 0x5C, 0x2F: out.append(e)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75:
                    guard var scalar = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by its low half.
                        guard i + 2 <= b.count, b[i] == 0x5C, b[i + 1] == 0x75 else { return nil }
                        i += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        return nil
                    }
                    guard let u = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: UTF8.encode(u)!)
                default: return nil
                }
            default:
                if c < 0x20 { return nil }
                out.append(c)
            }
        }
        return nil
    }

    mutating func hex4() -> UInt32? {
        guard i + 4 <= b.count else { return nil }
        var v: UInt32 = 0
        for k in 0..<4 {
            let c = b[i + k]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: return nil
            }
            v = v << 4 | d
        }
        i += 4
        return v
    }

    /// A string value: valid UTF-8, as JSONDecoder requires. ASCII (nearly every value) is made without the
    /// validating initializer's work.
    mutating func string() -> String? {
        let start = i
        if case .some(let plain?) = plainString() {
            if Self.isASCII(plain) { return String(decoding: plain, as: UTF8.self) }
            return String(validating: plain, as: UTF8.self)
        }
        i = start
        guard let bytes = stringBytes() else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An integer in -2^63...2^63-1 written as JSON writes one (`-`? then `0` or a digit 1-9 then digits), with
    /// no fraction and no exponent; the sign and the magnitude, so UInt64 fields get their whole range.
    mutating func integer() -> (negative: Bool, magnitude: UInt64)? {
        skipSpace()
        var negative = false
        if i < b.count, b[i] == 0x2D { negative = true; i += 1 }
        guard i < b.count, (0x30...0x39).contains(b[i]) else { return nil }
        if b[i] == 0x30, i + 1 < b.count, (0x30...0x39).contains(b[i + 1]) { return nil }
        var v: UInt64 = 0
        while i < b.count, (0x30...0x39).contains(b[i]) {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(b[i] - 0x30))
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        // A fraction or an exponent: not an integer this reader takes.
        if i < b.count, b[i] == 0x2E || b[i] == 0x65 || b[i] == 0x45 { return nil }
        return (negative, v)
    }

    mutating func int64() -> Int64? {
        guard let (negative, v) = integer() else { return nil }
        if negative { return v <= UInt64(Int64.max) + 1 ? (v == UInt64(Int64.max) + 1 ? Int64.min : -Int64(v)) : nil }
        return v <= UInt64(Int64.max) ? Int64(v) : nil
    }

    mutating func int() -> Int? { int64().map { Int($0) } }

    mutating func uint64() -> UInt64? {
        guard let (negative, v) = integer() else { return nil }
        if negative { return v == 0 ? 0 : nil }
        return v
    }

    mutating func uint32() -> UInt32? {
        guard let v = uint64(), v <= UInt64(UInt32.max) else { return nil }
        return UInt32(v)
    }

    /// Skips any JSON value (an unknown key's): false when it is not valid JSON. Depth is bounded.
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 32 else { return false }
        skipSpace()
        guard i < b.count else { return false }
        switch b[i] {
        case 0x22: return stringBytes() != nil
        case 0x7B:
            i += 1
            if take(0x7D) { return true }
            repeat {
                guard stringBytes() != nil, take(0x3A), skipValue(depth: depth + 1) else { return false }
            } while take(0x2C)
            return take(0x7D)
        case 0x5B:
            i += 1
            if take(0x5D) { return true }
            repeat {
                guard skipValue(depth: depth + 1) else { return false }
            } while take(0x2C)
            return take(0x5D)
        case 0x74: return literal("true")
        case 0x66: return literal("false")
        case 0x6E: return null()
        default: return number()
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        let same = word.withUTF8Buffer { w in (0..<n).allSatisfy { b[i + $0] == w[$0] } }
        if same { i += n }
        return same
    }

    /// Any JSON number (of a key this reader does not know).
    mutating func number() -> Bool {
        let start = i
        if i < b.count, b[i] == 0x2D { i += 1 }
        guard i < b.count, (0x30...0x39).contains(b[i]) else { return false }
        if b[i] == 0x30 { i += 1 } else { while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 } }
        if i < b.count, b[i] == 0x2E {
            i += 1
            guard i < b.count, (0x30...0x39).contains(b[i]) else { return false }
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == 0x65 || b[i] == 0x45 {
            i += 1
            if i < b.count, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
            guard i < b.count, (0x30...0x39).contains(b[i]) else { return false }
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
        }
        return i > start
    }

    // MARK: The record

    /// An optional field: `null` leaves it nil; otherwise `read` must succeed.
    @inline(__always) mutating func optional<T>(_ field: inout T?, _ read: (inout RecordParser) -> T?) -> Bool {
        if null() { field = nil; return true }
        guard let v = read(&self) else { return false }
        field = v
        return true
    }

    mutating func record() -> RecordBody? {
        guard take(0x7B) else { return nil }
        var r = RecordBody(tx: "", seq: 0, type: "")
        var seen: (tx: Bool, seq: Bool, type: Bool) = (false, false, false)
        if !take(0x7D) {
            repeat {
                guard let key = keyIndex(), take(0x3A) else { return nil }
                guard field(key, into: &r, seen: &seen) else { return nil }
            } while take(0x2C)
            guard take(0x7D) else { return nil }
        }
        skipSpace()
        guard i == b.count, seen.tx, seen.seq, seen.type else { return nil }
        return r
    }

    /// The key's field, or `.unknown` (its value is skipped); nil when the key is not a valid string.
    mutating func keyIndex() -> Key? {
        switch plainString() {
        case .none: return nil
        case .some(let plain?):
            let key = Key.lookup(plain)
            // A key the record has is ASCII; an unknown one must still be UTF-8 (JSON text).
            return key != .unknown || Self.isUTF8(plain) ? key : nil
        case .some(nil):
            guard let bytes = stringBytes() else { return nil }
            return bytes.withUnsafeBytes { Key.lookup($0) }
        }
    }

    mutating func field(_ key: Key, into r: inout RecordBody, seen: inout (tx: Bool, seq: Bool, type: Bool)) -> Bool {
        switch key {
        case .unknown: return skipValue()
        case .tx:
            guard let v = string() else { return false }
            r.tx = v; seen.tx = true; return true
        case .seq:
            guard let v = int() else { return false }
            r.seq = v; seen.seq = true; return true
        case .type:
            guard let v = string() else { return false }
            r.type = v; seen.type = true; return true
        case .time: return optional(&r.time) { $0.string() }
        case .timeNs: return optional(&r.timeNs) { $0.int64() }
        case .kind: return optional(&r.kind) { $0.string() }
        case .policy: return optional(&r.policy) { $0.string() }
        case .policySHA256: return optional(&r.policySHA256) { $0.string() }
        case .policyPath: return optional(&r.policyPath) { $0.string() }
        case .plan: return optional(&r.plan) { $0.string() }
        case .root: return optional(&r.root) { $0.string() }
        case .rootDev: return optional(&r.rootDev) { $0.uint64() }
        case .rootIno: return optional(&r.rootIno) { $0.uint64() }
        case .actions: return optional(&r.actions) { $0.int() }
        case .tool: return optional(&r.tool) { $0.string() }
        case .pid: return optional(&r.pid) { $0.int() }
        case .reverses: return optional(&r.reverses) { $0.string() }
        case .op: return optional(&r.op) { $0.int() }
        case .action: return optional(&r.action) { $0.int() }
        case .change: return optional(&r.change) { $0.string() }
        case .path: return optional(&r.path) { $0.string() }
        case .pathBase64: return optional(&r.pathBase64) { $0.string() }
        case .to: return optional(&r.to) { $0.string() }
        case .toBase64: return optional(&r.toBase64) { $0.string() }
        case .stage: return optional(&r.stage) { $0.string() }
        case .entryType: return optional(&r.entryType) { $0.string() }
        case .dev: return optional(&r.dev) { $0.uint64() }
        case .ino: return optional(&r.ino) { $0.uint64() }
        case .size: return optional(&r.size) { $0.int64() }
        case .mtimeNs: return optional(&r.mtimeNs) { $0.int64() }
        case .atimeNs: return optional(&r.atimeNs) { $0.int64() }
        case .setMtimeNs: return optional(&r.setMtimeNs) { $0.int64() }
        case .previousAtimeNs: return optional(&r.previousAtimeNs) { $0.int64() }
        case .previousMtimeNs: return optional(&r.previousMtimeNs) { $0.int64() }
        case .setMode: return optional(&r.setMode) { $0.uint32() }
        case .setUid: return optional(&r.setUid) { $0.uint32() }
        case .setGid: return optional(&r.setGid) { $0.uint32() }
        case .previousMode: return optional(&r.previousMode) { $0.uint32() }
        case .previousUid: return optional(&r.previousUid) { $0.uint32() }
        case .previousGid: return optional(&r.previousGid) { $0.uint32() }
        case .target: return optional(&r.target) { $0.string() }
        case .targetBase64: return optional(&r.targetBase64) { $0.string() }
        case .attr: return optional(&r.attr) { $0.string() }
        case .value: return optional(&r.value) { $0.string() }
        case .valueBase64: return optional(&r.valueBase64) { $0.string() }
        case .previous: return optional(&r.previous) { $0.string() }
        case .previousBase64: return optional(&r.previousBase64) { $0.string() }
        case .temp: return optional(&r.temp) { $0.string() }
        case .contents: return optional(&r.contents) { $0.string() }
        case .contentsBase64: return optional(&r.contentsBase64) { $0.string() }
        case .verb: return optional(&r.verb) { $0.string() }
        case .bytes: return optional(&r.bytes) { $0.int64() }
        case .rule: return optional(&r.rule) { $0.string() }
        case .reason: return optional(&r.reason) { $0.string() }
        case .errno: return optional(&r.errno) { $0.string() }
        case .call: return optional(&r.call) { $0.string() }
        case .counts: return optional(&r.counts) { $0.counts() }
        case .bytesFreed: return optional(&r.bytesFreed) { $0.int64() }
        case .skipped: return optional(&r.skipped) { $0.int() }
        case .ops: return optional(&r.ops) { $0.integers() }
        case .outcome: return optional(&r.outcome) { $0.string() }
        case .kept: return optional(&r.kept) { $0.int() }
        case .format: return optional(&r.format) { $0.int() }
        case .quarantine: return optional(&r.quarantine) { $0.string() }
        case .until: return optional(&r.until) { $0.string() }
        case .parent: return optional(&r.parent) { $0.uint64s() }
        case .quarantineDev: return optional(&r.quarantineDev) { $0.uint64() }
        case .quarantineIno: return optional(&r.quarantineIno) { $0.uint64() }
        case .quarantined: return optional(&r.quarantined) { $0.int() }
        case .bytesQuarantined: return optional(&r.bytesQuarantined) { $0.int64() }
        }
    }

    /// `{"delete": 3, ...}`: names to integers.
    mutating func counts() -> [String: Int]? {
        guard take(0x7B) else { return nil }
        var out: [String: Int] = [:]
        if take(0x7D) { return out }
        repeat {
            guard let k = string(), take(0x3A), let v = int() else { return nil }
            out[k] = v
        } while take(0x2C)
        return take(0x7D) ? out : nil
    }

    /// `[1, 2, 3]`.
    mutating func integers() -> [Int]? {
        guard take(0x5B) else { return nil }
        var out: [Int] = []
        if take(0x5D) { return out }
        repeat {
            guard let v = int() else { return nil }
            out.append(v)
        } while take(0x2C)
        return take(0x5D) ? out : nil
    }

    mutating func uint64s() -> [UInt64]? {
        guard take(0x5B) else { return nil }
        var out: [UInt64] = []
        if take(0x5D) { return out }
        repeat {
            guard let v = uint64() else { return nil }
            out.append(v)
        } while take(0x2C)
        return take(0x5D) ? out : nil
    }
}

/// Every key RecordBody has, found by length and bytes (no String made per key).
private enum Key: Int, CaseIterable {
    case unknown
    case tx, seq, type, time, timeNs, kind, policy, policySHA256, policyPath, plan, root, rootDev, rootIno, actions, tool, pid
    case reverses, op, action, change, path, pathBase64, to, toBase64, stage, entryType, dev, ino, size, mtimeNs, atimeNs
    case setMtimeNs, previousAtimeNs, previousMtimeNs, setMode, setUid, setGid, previousMode, previousUid, previousGid
    case target, targetBase64, attr, value, valueBase64, previous, previousBase64, temp, contents, contentsBase64, verb
    case bytes, rule, reason, errno, call, counts, bytesFreed, skipped, ops, outcome, kept
    case format, quarantine, until, parent, quarantineDev, quarantineIno, quarantined, bytesQuarantined

    /// The keys' bytes grouped by length: a lookup compares against the few of the key's length.
    static let table: [[(bytes: [UInt8], key: Key)]] = {
        var out = [[(bytes: [UInt8], key: Key)]](repeating: [], count: 32)
        for key in Key.allCases where key != .unknown {
            let name = Array("\(key)".utf8)
            out[name.count].append((name, key))
        }
        return out
    }()

    static func lookup(_ raw: UnsafeRawBufferPointer) -> Key {
        guard raw.count < table.count, let base = raw.baseAddress else { return .unknown }
        for candidate in table[raw.count] {
            let same = candidate.bytes.withUnsafeBytes { system_memcmp($0.baseAddress!, base, raw.count) == 0 }
            if same { return candidate.key }
        }
        return .unknown
    }
}
