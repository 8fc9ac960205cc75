// A size in bytes written with SI (`KB MB GB TB`) or binary (`KiB MiB GiB TiB`) units, or plain `B`.
// Fractions are allowed (`1.5GiB`) and rounded down to whole bytes; negative sizes are not.

/// A size in bytes, as policies write it (`512MiB`, `2GB`, `100B`).
public struct ByteSize: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The size in bytes.
    public var bytes: Int64

    /// A size of `bytes` bytes.
    public init(bytes: Int64) { self.bytes = bytes }

    /// How sizes may be written, for error messages.
    package static let acceptedForms = "a number with a unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. 512MiB, 1.5GB"

    private static let units: [(String, Double)] = [
        ("TiB", 1_099_511_627_776), ("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1024),
        ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("kB", 1e3), ("B", 1),
    ]

    /// Parses `512MiB`, `1GB`, `1.5GiB`, `4096B`; also a bare integer as bytes.
    public init?(parsing text: String) {
        let t = text.trimmingWhitespace
        var numberPart = t
        var multiplier: Double = 1
        for (suffix, m) in ByteSize.units where t.hasSuffix(suffix) {
            numberPart = String(t.dropLast(suffix.count)).trimmingWhitespace
            multiplier = m
            break
        }
        guard !numberPart.isEmpty, numberPart.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              numberPart.filter({ $0 == "." }).count <= 1, let value = Double(numberPart) else { return nil }
        if multiplier == 1 && numberPart.contains(".") { return nil }
        let total = value * multiplier
        guard total.isFinite, total >= 0, total < 9.2e18 else { return nil }
        self.bytes = Int64(total)
    }

    /// Human size with binary units: `4.0 KiB`, `512 B`, `1.5 GiB`.
    public var description: String { ByteSize.human(bytes) }

    /// `bytes` for people, in binary units: `4.0 KiB`, `512 MiB`.
    public static func human(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        var value = Double(bytes)
        for unit in ["KiB", "MiB", "GiB", "TiB", "PiB"] {
            value /= 1024
            if value < 1024 || unit == "PiB" {
                let tenths = (value * 10).rounded() / 10
                return "\(tenths) \(unit)"
            }
        }
        return "\(bytes) B"
    }

    /// Orders sizes by their byte count.
    public static func < (a: ByteSize, b: ByteSize) -> Bool { a.bytes < b.bytes }
}

extension String {
    package var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
