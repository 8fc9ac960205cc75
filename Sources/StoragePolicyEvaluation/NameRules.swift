// Name arithmetic for naming rules and moves: lowercase forms and Finder-style free names (`name (2).ext`).
// Works on bytes; only valid UTF-8 is ever case-mapped, and no result ever contains '/' or NUL.

package enum NameRules {
    /// The longest name (in bytes) Linux file systems take (NAME_MAX); a longer rename target fails.
    static let nameMax = 255

    /// The lowercase form of a UTF-8 name (Unicode case mapping); nil when the name is not valid UTF-8.
    package static func lowercased(_ name: ArraySlice<UInt8>) -> [UInt8]? {
        guard let text = String(validating: name, as: UTF8.self) else { return nil }
        return Array(text.lowercased().utf8)
    }

    /// The Finder's numbered form: `name (2).ext`, the extension (from the last dot, unless the name
    /// starts with it or ends with it) kept outside the counter.
    static func numbered(_ name: [UInt8], _ n: Int) -> [UInt8] {
        let split = counterPosition(name)
        return Array(name[..<split]) + Array(" (\(n))".utf8) + Array(name[split...])
    }

    /// Where the counter goes: before the extension's dot, or at the end.
    static func counterPosition(_ name: [UInt8]) -> Int {
        if let dot = name.lastIndex(of: 0x2E), dot > 0, dot < name.count - 1 { return dot }
        return name.count
    }

    /// Why a rename to `name` cannot be done (longer than NAME_MAX), naming its byte count; nil when it can.
    static func overlong(_ name: [UInt8]) -> String? {
        name.count > nameMax ? "the new name would be \(name.count) bytes, more than the \(nameMax) a file name may have (NAME_MAX)" : nil
    }

    /// True when `candidate` is `preferred` or one of its numbered forms (`name (N).ext`, N >= 2 written
    /// without leading zeros): what `freeName` can return for `preferred`.
    static func isFreeForm(_ candidate: [UInt8], of preferred: [UInt8]) -> Bool {
        if candidate == preferred { return true }
        let split = counterPosition(preferred)
        let head = preferred[..<split], tail = preferred[split...]
        guard candidate.count > head.count + tail.count + 3, candidate.starts(with: head),
              candidate.suffix(tail.count).elementsEqual(tail) else { return false }
        let middle = candidate[head.count..<(candidate.count - tail.count)]
        guard middle.first == 0x20, middle.dropFirst().first == 0x28, middle.last == 0x29 else { return false }
        let digits = middle.dropFirst(2).dropLast()
        guard !digits.isEmpty, digits.count <= 18, digits.first != 0x30, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        return Int(String(decoding: digits, as: UTF8.self))! >= 2
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

/// The lowercase form of a name, computed without Unicode machinery for the ASCII names most are.
package enum LowercaseForm {
    case unchanged
    case changed([UInt8])
    case notUTF8

    package init(_ name: ArraySlice<UInt8>) {
        var upper = false
        for b in name {
            if b >= 0x80 {
                guard let lower = NameRules.lowercased(name) else { self = .notUTF8; return }
                self = lower.elementsEqual(name) ? .unchanged : .changed(lower)
                return
            }
            if b >= 0x41 && b <= 0x5A { upper = true }
        }
        self = upper ? .changed(name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }) : .unchanged
    }
}
