// The bytes under PlanJSONReader: pieces refilled as the reader reaches their end, strings decoded into one
// reused buffer, integers without fraction or exponent, and any other value copied as written (or skipped).
// Whatever is not plain JSON is `Unsupported`, never guessed at (the caller then uses JSONDecoder).

@_spi(Layers) import StoragePolicyFileSystem

enum Byte {
    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ","), openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]"), minus = UInt8(ascii: "-")
    static let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
    /// What ends a number or a literal.
    static func endsScalar(_ b: UInt8) -> Bool { isSpace(b) || b == comma || b == closeBrace || b == closeBracket }
}

extension PlanJSONReader {
    func unsupported(_ what: String) -> Unsupported { Unsupported(description: what) }

    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
    }

    /// `bytes` as a String (they must be UTF-8), shared with earlier equal ones.
    mutating func intern(_ bytes: [UInt8]) throws -> String {
        if let known = interned[bytes] { return known }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw unsupported("a string that is not UTF-8") }
        // Up to 15 bytes a String holds inline: nothing to share. The table is bounded for plans of unique reasons.
        if bytes.count > 15 && interned.count < 1 << 16 { interned[bytes] = text }
        return text
    }

    // MARK: Bytes

    /// The byte at the reading position, reading the next piece when this one is used up; nil at the end.
    @inline(__always)
    mutating func peek() throws -> UInt8? {
        if position == buffer.endIndex, !(try refill()) { return nil }
        return buffer[position]
    }

    /// The byte at the reading position, consumed; the end of the plan here is unsupported.
    @inline(__always)
    mutating func next() throws -> UInt8 {
        guard let b = try peek() else { throw unsupported("the plan ends early") }
        position += 1
        return b
    }

    private mutating func refill() throws -> Bool {
        while !ended {
            // Let go of the last piece first, so the source can reuse its buffer.
            buffer = []
            guard let piece = try nextPiece() else { ended = true; return false }
            buffer = piece
            position = piece.startIndex
            if !piece.isEmpty { return true }
        }
        return false
    }

    /// Skips white space; the byte after it (not consumed), or nil at the end.
    mutating func skipSpace() throws -> UInt8? {
        while let b = try peek() {
            if !Byte.isSpace(b) { return b }
            position += 1
        }
        return nil
    }

    // MARK: Values

    /// A key and its colon: plain bytes, no escapes (an escaped key is unsupported).
    mutating func key() throws -> [UInt8] {
        guard try skipSpace() == Byte.quote else { throw unsupported("no key") }
        position += 1
        var key: [UInt8] = []
        while true {
            let b = try next()
            if b == Byte.quote { break }
            guard b != Byte.backslash, b >= 0x20 else { throw unsupported("an escaped key") }
            key.append(b)
        }
        guard try skipSpace() == Byte.colon else { throw unsupported("no ':' after a key") }
        position += 1
        return key
    }

    /// `null` (consumed) or not (nothing consumed).
    mutating func null() throws -> Bool {
        guard try skipSpace() == UInt8(ascii: "n") else { return false }
        for expected in "null".utf8 {
            guard try next() == expected else { throw unsupported("a literal that is not null") }
        }
        if let after = try peek(), !Byte.endsScalar(after) { throw unsupported("a literal that is not null") }
        return true
    }

    /// A string's decoded bytes, or nil for null. Escapes as JSON has them; a lone surrogate, a raw control
    /// character or an unknown escape is unsupported.
    mutating func string() throws -> [UInt8]? {
        if try null() { return nil }
        guard try skipSpace() == Byte.quote else { throw unsupported("a value that is no string") }
        position += 1
        scratch.removeAll(keepingCapacity: true)
        while true {
            let b = try next()
            if b == Byte.quote { break }
            guard b >= 0x20 else { throw unsupported("a control character in a string") }
            guard b == Byte.backslash else { scratch.append(b); continue }
            switch try next() {
            case Byte.quote: scratch.append(Byte.quote)
            case Byte.backslash: scratch.append(Byte.backslash)
            case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard try next() == Byte.backslash, try next() == UInt8(ascii: "u") else { throw unsupported("a lone surrogate") }
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw unsupported("a lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw unsupported("a lone surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw unsupported("an invalid escape") }
                scratch += UTF8.encode(u)!
            default: throw unsupported("an unknown escape")
            }
        }
        return scratch
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = try next()
            let digit: UInt8
            switch b {
            case Byte.zero...Byte.nine: digit = b - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw unsupported("an invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// An integer that fits an Int64, or nil for null; a fraction, an exponent, `-0` or a leading zero is unsupported.
    mutating func integer() throws -> Int64? {
        if try null() { return nil }
        let negative = try skipSpace() == Byte.minus
        if negative { position += 1 }
        let magnitude = try digits()
        if negative {
            guard magnitude != 0, magnitude <= UInt64(Int64.max) + 1 else { throw unsupported("a number out of range") }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw unsupported("a number out of range") }
        return Int64(magnitude)
    }

    /// An integer that fits a UInt64 (no sign, not null).
    mutating func unsignedInteger() throws -> UInt64 {
        guard try skipSpace() != Byte.minus else { throw unsupported("a negative device or inode") }
        return try digits()
    }

    private mutating func digits() throws -> UInt64 {
        var value: UInt64 = 0
        var count = 0
        var first: UInt8 = 0
        while let b = try peek(), b >= Byte.zero && b <= Byte.nine {
            if count == 0 { first = b }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(b - Byte.zero))
            guard !o1, !o2 else { throw unsupported("a number out of range") }
            value = sum
            count += 1
            position += 1
        }
        guard count > 0, !(first == Byte.zero && count > 1) else { throw unsupported("no plain integer") }
        if let after = try peek(), !Byte.endsScalar(after) { throw unsupported("no plain integer") }
        return value
    }

    /// Copies a value of any kind as written to `out`. Not checked here: JSONDecoder reads what is copied.
    mutating func copyValue(into out: inout [UInt8]) throws {
        try copyValue(into: &out, keep: true)
    }

    /// Skips a value of any kind: one `Action.init(from:)` never reads either.
    mutating func skipValue() throws {
        var none: [UInt8] = []
        try copyValue(into: &none, keep: false)
    }

    private mutating func copyValue(into out: inout [UInt8], keep: Bool) throws {
        guard let first = try skipSpace() else { throw unsupported("the plan ends early") }
        if first != Byte.quote && first != Byte.openBrace && first != Byte.openBracket {
            while let b = try peek(), !Byte.endsScalar(b) {
                if keep { out.append(b) }
                position += 1
            }
            return
        }
        var depth = 0
        repeat {
            let b = try next()
            if keep { out.append(b) }
            switch b {
            case Byte.quote:
                // Through the string's end, escapes included.
                while true {
                    let c = try next()
                    if keep { out.append(c) }
                    if c == Byte.quote { break }
                    if c == Byte.backslash {
                        let escaped = try next()
                        if keep { out.append(escaped) }
                    }
                }
            case Byte.openBrace, Byte.openBracket: depth += 1
            case Byte.closeBrace, Byte.closeBracket: depth -= 1
            default: break
            }
        } while depth > 0
    }
}
