// Byte-wise ordering of names and paths (memcmp order): the order plans are sorted in. The bottom layer's
// part is bytes only; ordering paths and actions by it is Plan/ActionOrder.swift.

/// Byte-wise ordering with memcmp: the order plans are sorted in, at a fraction of the generic cost.
/// SPI-public and inlinable, as ConditionLocked explains: the sorts that call it are in the layers above.
@_spi(Layers) public enum ByteOrder {
    @inlinable @inline(__always)
    public static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let r = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in system_memcmp(x.baseAddress!, y.baseAddress!, n) } }
            if r != 0 { return Int(r) }
        }
        return a.count - b.count
    }

    @inlinable @inline(__always)
    public static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
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
    @inlinable @inline(__always)
    public static func key(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> Key16 {
        var high: UInt64 = 0, low: UInt64 = 0
        let end = min(bytes.count, offset + 16)
        var i = offset
        while i < min(end, offset + 8) { high |= UInt64(bytes[i]) << (56 - 8 * UInt64(i - offset)); i += 1 }
        while i < end { low |= UInt64(bytes[i]) << (56 - 8 * UInt64(i - offset - 8)); i += 1 }
        return Key16(high: high, low: low)
    }

    /// Sixteen bytes of a byte string, as two integers compared in order.
    public struct Key16: Equatable {
        public var high: UInt64
        public var low: UInt64

        @inlinable public init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

        @inlinable @inline(__always)
        public static func < (a: Key16, b: Key16) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
    }

    /// How many leading bytes the `count` strings `string(i)` all share (0 when there are none).
    package static func sharedPrefix(_ count: Int, _ string: (Int) -> [UInt8]) -> Int {
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

    /// Puts `items[order[k]]` at position k (`order` a permutation of the indices), cycle by cycle, each
    /// item moved once through a pointer, bits only: building a new array would copy (retain) every field,
    /// and `swapAt` checked uniqueness and bounds per swap. No second array: a plan's actions can be many.
    @inlinable public static func permute<Element>(_ items: inout [Element], _ order: [Int]) {
        let n = items.count
        precondition(order.count == n, "a permutation of every index")
        guard n > 1 else { return }
        var placed = [Bool](repeating: false, count: n)
        let held = UnsafeMutablePointer<Element>.allocate(capacity: 1)
        defer { held.deallocate() }
        items.withUnsafeMutableBufferPointer { all in
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