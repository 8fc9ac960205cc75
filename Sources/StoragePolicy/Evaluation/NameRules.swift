// Name arithmetic for naming rules and moves: lowercase forms and Finder-style free names (`name (2).ext`).
// Works on bytes; only valid UTF-8 is ever case-mapped, and no result ever contains '/' or NUL.

enum NameRules {
    /// The lowercase form of a UTF-8 name (Unicode case mapping); nil when the name is not valid UTF-8.
    static func lowercased(_ name: ArraySlice<UInt8>) -> [UInt8]? {
        guard let text = String(validating: name, as: UTF8.self) else { return nil }
        return Array(text.lowercased().utf8)
    }

    /// The Finder's numbered form: `name (2).ext`, the extension (from the last dot, unless the name
    /// starts with it or ends with it) kept outside the counter.
    static func numbered(_ name: [UInt8], _ n: Int) -> [UInt8] {
        let counter = Array(" (\(n))".utf8)
        if let dot = name.lastIndex(of: 0x2E), dot > 0, dot < name.count - 1 {
            return Array(name[..<dot]) + counter + Array(name[dot...])
        }
        return name + counter
    }

    /// `preferred` if it is free, else the first free numbered form, counting from 2.
    static func freeName(_ preferred: [UInt8], isTaken: ([UInt8]) -> Bool) -> [UInt8] {
        if !isTaken(preferred) { return preferred }
        var n = 2
        while true {
            let candidate = numbered(preferred, n)
            if !isTaken(candidate) { return candidate }
            n += 1
        }
    }
}
