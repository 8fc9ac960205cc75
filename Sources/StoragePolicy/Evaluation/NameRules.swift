// Name arithmetic for naming rules and moves: lowercase forms and Finder-style free names (`name (2).ext`).
// Works on bytes; only valid UTF-8 is ever case-mapped, and no result ever contains '/' or NUL.

enum NameRules {
    /// The longest name (in bytes) Linux file systems take (NAME_MAX); a longer rename target fails.
    static let nameMax = 255

    /// The lowercase form of a UTF-8 name (Unicode case mapping); nil when the name is not valid UTF-8.
    static func lowercased(_ name: ArraySlice<UInt8>) -> [UInt8]? {
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
            let r = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in system_memcmp(x.baseAddress!, y.baseAddress!, n) } }
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
            let r = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in system_memcmp(x.baseAddress!, y.baseAddress!, n) } }
            if r != 0 { return r < 0 }
        }
        return a.count < b.count
    }

    /// A sort key for a byte string whose first `offset` bytes every string sorted with it shares: its next
    /// 16 bytes, big-endian, zero padded. Keys that differ order their strings as `compare` does (no name or
    /// path holds a NUL, so the padding puts the shorter of two strings first); equal keys leave it to
    /// `compare`. Most comparisons of a large sort then look at two integers instead of calling memcmp.
    @inline(__always)
    static func key(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> Key16 {
        var high: UInt64 = 0, low: UInt64 = 0
        let end = min(bytes.count, offset + 16)
        var i = offset
        while i < min(end, offset + 8) { high |= UInt64(bytes[i]) << (56 - 8 * UInt64(i - offset)); i += 1 }
        while i < end { low |= UInt64(bytes[i]) << (56 - 8 * UInt64(i - offset - 8)); i += 1 }
        return Key16(high: high, low: low)
    }

    /// Sixteen bytes of a byte string, as two integers compared in order.
    struct Key16: Equatable {
        var high: UInt64
        var low: UInt64

        @inline(__always)
        static func < (a: Key16, b: Key16) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
    }

    /// How many leading bytes the `count` strings `string(i)` all share (0 when there are none).
    static func sharedPrefix(_ count: Int, _ string: (Int) -> [UInt8]) -> Int {
        guard count > 0 else { return 0 }
        let first = string(0)
        var shared = first.count
        for i in 1..<max(count, 1) where shared > 0 {
            let other = string(i)
            var n = 0
            let limit = min(shared, other.count)
            while n < limit && first[n] == other[n] { n += 1 }
            shared = n
        }
        return shared
    }

    /// Sorts actions the way Plan.sort orders them (path bytes, rule, action, reason), moving each action
    /// once: Plan.sort then finds them in order and only checks.
    static func sortActions(_ actions: inout [Action]) {
        // Keys pulled out once, so comparisons touch two small arrays instead of two whole actions.
        // Fields read through a buffer pointer: `actions[i].rule` copied (retained) the whole action per look.
        var order = Array(actions.indices)
        actions.withUnsafeBufferPointer { a in
            order.sort { i, j in
                let c = compare(a[i].path.bytes, a[j].path.bytes)
                if c != 0 { return c < 0 }
                if a[i].rule != a[j].rule { return a[i].rule < a[j].rule }
                let (x, y) = (a[i].kind.name, a[j].kind.name)
                if x != y { return x < y }
                return a[i].reason < a[j].reason
            }
        }
        permute(&actions, order)
    }

    /// Puts `actions[order[k]]` at position k (`order` a permutation of the indices), cycle by cycle, each
    /// action moved once through a pointer, bits only: building a new array would copy (retain) every field,
    /// and `swapAt` checked uniqueness and bounds per swap. No second array: a plan's actions can be many.
    static func permute(_ actions: inout [Action], _ order: [Int]) {
        let n = actions.count
        precondition(order.count == n, "a permutation of every index")
        guard n > 1 else { return }
        var placed = [Bool](repeating: false, count: n)
        let held = UnsafeMutablePointer<Action>.allocate(capacity: 1)
        defer { held.deallocate() }
        actions.withUnsafeMutableBufferPointer { all in
            let base = all.baseAddress!
            order.withUnsafeBufferPointer { o in
                for start in 0..<n where !placed[start] {
                    placed[start] = true
                    guard o[start] != start else { continue }
                    held.moveInitialize(from: base + start, count: 1)
                    var current = start
                    while true {
                        let next = o[current]
                        if next == start {
                            (base + current).moveInitialize(from: held, count: 1)
                            break
                        }
                        (base + current).moveInitialize(from: base + next, count: 1)
                        placed[next] = true
                        current = next
                    }
                }
            }
        }
    }
}
