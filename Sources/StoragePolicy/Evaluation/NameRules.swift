// Name arithmetic for naming rules and moves: lowercase forms and Finder-style free names (`name (2).ext`).
// Works on bytes; only valid UTF-8 is ever case-mapped, and no result ever contains '/' or NUL.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The lowercase form of a name, computed without Unicode machinery for the ASCII names most are.
enum LowercaseForm {
    case unchanged
    case changed([UInt8])
    case notUTF8

    init(_ name: ArraySlice<UInt8>) {
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

/// Byte-wise ordering with memcmp: the order plans are sorted in, at a fraction of the generic cost.
enum ByteOrder {
    @inline(__always)
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let r = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in memcmp(x.baseAddress!, y.baseAddress!, n) } }
            if r != 0 { return Int(r) }
        }
        return a.count - b.count
    }

    @inline(__always)
    static func precedes(_ a: RelativePath, _ b: RelativePath) -> Bool { compare(a.bytes, b.bytes) < 0 }

    @inline(__always)
    static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        let n = min(a.count, b.count)
        if n > 0 {
            let r = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in memcmp(x.baseAddress!, y.baseAddress!, n) } }
            if r != 0 { return r < 0 }
        }
        return a.count < b.count
    }

    /// Sorts actions the way Plan.sort orders them (path bytes, rule, action, reason), moving each action
    /// once: Plan.sort then finds them in order and only checks.
    static func sortActions(_ actions: inout [Action]) {
        // Keys pulled out once, so comparisons touch two small arrays instead of two whole actions.
        let paths = actions.map(\.path.bytes)
        var order = Array(actions.indices)
        order.sort { i, j in
            let c = compare(paths[i], paths[j])
            if c != 0 { return c < 0 }
            if actions[i].rule != actions[j].rule { return actions[i].rule < actions[j].rule }
            let (x, y) = (actions[i].kind.name, actions[j].kind.name)
            if x != y { return x < y }
            return actions[i].reason < actions[j].reason
        }
        // Apply the permutation in place, cycle by cycle.
        var placed = [Bool](repeating: false, count: order.count)
        for start in order.indices where !placed[start] {
            var current = start
            while true {
                placed[current] = true
                let next = order[current]
                if placed[next] { break }
                actions.swapAt(current, next)
                current = next
            }
        }
    }
}
