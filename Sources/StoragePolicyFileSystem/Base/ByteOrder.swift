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
        if bytes.count >= offset + 16 {
            // The whole window present (most keys of a path sort past the first): two loads, not sixteen shifts.
            let raw = UnsafeRawPointer(bytes.baseAddress! + offset)
            return Key16(high: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                         low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
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

    /// An index with its string's sort key at the current depth.
    public struct Keyed {
        public var key: Key16
        public var index: Int
        @inlinable public init(key: Key16, index: Int) { self.key = key; self.index = index }
    }

    /// Sorts `order` (indices of byte strings that all share their first `offset` bytes) into memcmp order of
    /// their strings, `tie` ordering equal strings. A most-significant-first sort sixteen bytes at a time:
    /// the strings are sorted by their 16-byte keys, then each run of equal keys by its next sixteen bytes,
    /// and so on. Every comparison is of two integers: a comparison sort over keys of one fixed window fell
    /// back to memcmp whenever the window did not tell two paths apart, which in real trees (`tmp/t-1/t-2/x`
    /// beside `tmp/t-1/t-2/y`) is nearly always. `length(i)` is string i's byte count; `key(i, at)` its
    /// `ByteOrder.key` from `at`.
    @inlinable
    public static func sortIndices(_ order: inout [Int], from offset: Int, length: (Int) -> Int,
                                   key: (Int, Int) -> Key16, tie: (Int, Int) -> Bool) {
        guard order.count > 1 else { return }
        var entries = order.map { Keyed(key: key($0, offset), index: $0) }
        entries.withUnsafeMutableBufferPointer { sortRuns($0, from: offset, length: length, key: key, tie: tie) }
        for k in entries.indices { order[k] = entries[k].index }
    }

    /// `sortIndices` on entries whose keys are those from `offset`.
    @inlinable
    static func sortRuns(_ entries: UnsafeMutableBufferPointer<Keyed>, from start: Int, length: (Int) -> Int,
                         key: (Int, Int) -> Key16, tie: (Int, Int) -> Bool) {
        var offset = start
        // A window every string shares tells none apart (`t-2/scratch-` in one folder's paths): skipped, not
        // sorted, while some string goes on past it.
        while entries.count > 1, entries.allSatisfy({ $0.key == entries[0].key }),
              entries.contains(where: { length($0.index) > offset + 16 }) {
            offset += 16
            for k in entries.indices { entries[k].key = key(entries[k].index, offset) }
        }
        sortByKey(entries.baseAddress!, 0, entries.count, depth: 2 * (Int.bitWidth - entries.count.leadingZeroBitCount))
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count && entries[end].key == entries[start].key { end += 1 }
            if end - start > 1 {
                var run = UnsafeMutableBufferPointer(rebasing: entries[start..<end])
                if !run.contains(where: { length($0.index) > offset + 16 }) {
                    // Equal keys, every string ended within them: equal strings (none holds a NUL). A string
                    // that ends exactly at the window's end sorts before longer ones with the same 16 bytes
                    // at the next depth, where its key is all padding.
                    run.sort { tie($0.index, $1.index) }
                } else {
                    for k in run.indices { run[k].key = key(run[k].index, offset + 16) }
                    sortRuns(run, from: offset + 16, length: length, key: key, tie: tie)
                }
            }
            start = end
        }
    }

    /// Sorts `p[low..<high]` by key: a quicksort on the keys alone (the library's sort is stable and calls its
    /// comparison through a closure, at four times the instructions). Equal keys end in any order: callers sort
    /// those runs further. Past `depth` levels (keys chosen to defeat the median of three: names are anyone's)
    /// the rest goes to the library's sort, so the bound stays n log n.
    @inlinable
    static func sortByKey(_ p: UnsafeMutablePointer<Keyed>, _ low: Int, _ high: Int, depth: Int) {
        var low = low, high = high, depth = depth
        while high - low > 16 {
            if depth == 0 {
                var rest = UnsafeMutableBufferPointer(start: p + low, count: high - low)
                rest.sort { $0.key < $1.key }
                return
            }
            depth -= 1
            // The median of the first, middle and last keys, moved to `low`: Hoare's partition around p[low]
            // then leaves both sides non-empty.
            let mid = low + (high - low) / 2
            if p[mid].key < p[low].key { swap(&p[mid], &p[low]) }
            if p[high - 1].key < p[mid].key {
                swap(&p[high - 1], &p[mid])
                if p[mid].key < p[low].key { swap(&p[mid], &p[low]) }
            }
            swap(&p[low], &p[mid])
            let pivot = p[low].key
            var i = low - 1, j = high
            while true {
                repeat { i += 1 } while p[i].key < pivot
                repeat { j -= 1 } while pivot < p[j].key
                if i >= j { break }
                swap(&p[i], &p[j])
            }
            // p[low...j] <= pivot <= p[j+1..<high]: the smaller side recursively, the larger in this loop.
            if j + 1 - low < high - j - 1 {
                sortByKey(p, low, j + 1, depth: depth)
                low = j + 1
            } else {
                sortByKey(p, j + 1, high, depth: depth)
                high = j + 1
            }
        }
        // Insertion sort for the short ranges.
        var k = low + 1
        while k < high {
            let item = p[k]
            var m = k
            while m > low && item.key < p[m - 1].key { p[m] = p[m - 1]; m -= 1 }
            p[m] = item
            k += 1
        }
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