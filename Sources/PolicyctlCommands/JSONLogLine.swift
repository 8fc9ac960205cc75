// One line of `--log-format json` (apply, recover, trash), through the library's one JSON writer. The bytes are
// those the lines have always had: keys in sorted order, strings escaped as JSONEncoder escapes them, `/` as it
// is, seconds with at most three decimals and no `.0` on a whole number.
import StoragePolicy
// The JSON writer is SPI of the bottom layer (Base/JSONWriter.swift says why); the command layer writes through it.
@_spi(Layers) import StoragePolicyFileSystem

struct JSONLogLine {
    enum Value {
        case string(String)
        case integer(Int64)
        case null
        /// A duration, written in seconds rounded to the millisecond.
        case seconds(Double)
        /// Counts by name, as a nested object in name order.
        case counts([String: Int])
        /// Objects of integers, as an array of nested objects with keys in name order.
        case integerObjects([[String: Int64]])
    }

    private(set) var fields: [(key: String, value: Value)] = []

    init(_ fields: [(String, Value)] = []) {
        for (k, v) in fields { append(k, v) }
    }

    mutating func append(_ key: String, _ value: Value) { fields.append((key, value)) }
    mutating func append(_ key: String, _ value: String) { append(key, .string(value)) }
    mutating func append(_ key: String, _ value: some BinaryInteger) { append(key, .integer(Int64(value))) }

    /// The line without its newline. A key given twice is written once, with its last value (as a dictionary
    /// built from the fields kept it).
    var bytes: [UInt8] {
        var last: [String: Value] = [:]
        for field in fields { last[field.key] = field.value }
        var out = JSONWriter(capacity: 256)
        out.byte(UInt8(ascii: "{"))
        for (i, key) in last.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if i > 0 { out.byte(UInt8(ascii: ",")) }
            out.string(key, escaping: .encoder)
            out.byte(UInt8(ascii: ":"))
            Self.write(last[key]!, to: &out)
        }
        out.byte(UInt8(ascii: "}"))
        return out.takeBytes()
    }

    private static func write(_ value: Value, to out: inout JSONWriter) {
        switch value {
        case .string(let s): out.string(s, escaping: .encoder)
        case .integer(let n): out.integer(n)
        case .null: out.literal("null")
        case .seconds(let seconds):
            let ms = Int64((seconds * 1000).rounded())
            out.integer(ms / 1000)
            var fraction = ms % 1000
            guard fraction > 0 else { return }
            var digits = 3
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            out.byte(UInt8(ascii: "."))
            for _ in String(fraction).count..<digits { out.byte(UInt8(ascii: "0")) }
            out.integer(fraction)
        case .counts(let counts):
            out.byte(UInt8(ascii: "{"))
            for (i, name) in counts.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.string(name, escaping: .encoder)
                out.byte(UInt8(ascii: ":"))
                out.integer(counts[name]!)
            }
            out.byte(UInt8(ascii: "}"))
        case .integerObjects(let objects):
            out.byte(UInt8(ascii: "["))
            for (k, object) in objects.enumerated() {
                if k > 0 { out.byte(UInt8(ascii: ",")) }
                out.byte(UInt8(ascii: "{"))
                for (i, name) in object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                    if i > 0 { out.byte(UInt8(ascii: ",")) }
                    out.string(name, escaping: .encoder)
                    out.byte(UInt8(ascii: ":"))
                    out.integer(object[name]!)
                }
                out.byte(UInt8(ascii: "}"))
            }
            out.byte(UInt8(ascii: "]"))
        }
    }
}
