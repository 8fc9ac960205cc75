// The plan's single-threaded tail, made cheaper without changing a byte of its output: the JSON writer's own
// number and string code (digit counts, eight-byte escape scan, repeated fields copied as escaped bytes), the
// integer sort keys that order paths and names as memcmp does, and actions moved into a new order in place.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
import TreeFixture

@Suite("Plan tail") struct PlanTailTests {
    /// Numbers at every digit count (and both ends of Int64 and UInt64); reasons with a quote, a backslash or
    /// a control character at every offset of two eight-byte words, each written twice in a row (the second
    /// time from the memo), an empty reason first (the memo's initial text).
    static func awkwardPlan() -> Plan {
        var actions: [Action] = []
        var n = 0
        // The numbers go into the identity: the summary adds up `bytes`, which must not overflow.
        func add(bytes: Int64, reason: String, inode: UInt64 = 1) {
            let identity = EntryIdentity(device: UInt64.max, inode: inode, size: bytes, modificationTimeNs: bytes)
            actions.append(Action(kind: .delete, path: path("f\(n)"), rule: "r", reason: reason, bytes: n == 1 ? .max : 0,
                                  identity: identity, type: .regular))
            n += 1
        }
        add(bytes: 0, reason: "")
        var power: Int64 = 1
        for _ in 0..<19 {
            add(bytes: power - 1, reason: "below", inode: UInt64(power))
            add(bytes: power, reason: "at", inode: UInt64(power) + 1)
            if power <= Int64.max / 10 { power *= 10 }
        }
        add(bytes: .max, reason: "max", inode: .max)
        add(bytes: .min, reason: "min", inode: 0)
        add(bytes: -1, reason: "minus one")
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\t"] {
            for offset in 0..<17 {
                let reason = String(repeating: "a", count: offset) + special + "tail é \u{7F}"
                add(bytes: Int64(offset), reason: reason)
                add(bytes: Int64(offset), reason: String(decoding: Array(reason.utf8), as: UTF8.self))
            }
        }
        return Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 1, actions: actions)
    }

    @Test("streamed JSON of awkward numbers and strings says what the Codable form says, and decodes back exactly")
    func awkwardJSON() throws {
        let plan = Self.awkwardPlan()
        let streamed = PlanJSONWriter.data(plan)
        let a = try JSONSerialization.jsonObject(with: Data(streamed)) as! NSDictionary
        let b = try JSONSerialization.jsonObject(with: try plan.jsonData()) as! NSDictionary
        #expect(a == b)
        #expect(try Plan.decode(json: Data(streamed)) == plan)
        let text = String(decoding: streamed, as: UTF8.self)
        #expect(text.contains("\"bytes\" : 9223372036854775807,"))
        #expect(text.contains("\"size\" : 9223372036854775807\n"))
        #expect(text.contains("\"size\" : -9223372036854775808\n"))
        #expect(text.contains("\"dev\" : 18446744073709551615,"))
        #expect(text.contains("\"ino\" : 18446744073709551615,"))
        #expect(text.contains("\"mtimeNs\" : 999999999999999999,"))
        #expect(text.contains("\"mtimeNs\" : 1000000000000000000,"))
        #expect(text.contains("\"mtimeNs\" : 9,"))
        #expect(text.contains("\"mtimeNs\" : 10,"))
        #expect(text.contains("\"reason\" : \"\","))
        #expect(text.contains("\"reason\" : \"aaaaaaa\\u001ftail é \u{7F}\","))
        #expect(text.contains("\"reason\" : \"aaaaaaaaaaaaaaaa\\\"tail é \u{7F}\","))
    }

    @Test("a plan large enough for two rendering threads streams every action once, in order, in pieces of about 64 KiB")
    func largeJSON() throws {
        let rules = ["tmp-expiry", "lower", "no-db"]
        let actions = (0..<20_011).map { i -> Action in
            let identity = EntryIdentity(device: 7, inode: UInt64(i), size: Int64(i % 977), modificationTimeNs: Int64(i) * 1_000_003)
            let name: [UInt8] = i % 101 == 0 ? [0x66, 0xFF, 0x0A] + Array("\(i)".utf8) : Array("f\(i).dat".utf8)
            let path = RelativePath([0x74, 0x6D, 0x70, 0x2F] + name)!
            if i % 7 == 0 {
                return Action(kind: .rename(to: RelativePath(Array("tmp/r\(i)".utf8))!), path: path, rule: rules[1],
                              reason: "name has uppercase letters", identity: identity, type: .regular)
            }
            return Action(kind: .delete, path: path, rule: rules[i % 3 == 0 ? 2 : 0], reason: "mtime \(i % 5)d ago > 1d",
                          bytes: Int64(i % 13) * 4096, identity: identity, type: i % 11 == 0 ? .directory : .regular,
                          entries: i % 11 == 0 ? 3 : 1)
        }
        let plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 1, actions: actions)
        var pieces: [[UInt8]] = []
        var writer = PlanJSONWriter { pieces.append($0) }
        try writer.write(plan)
        let streamed = pieces.flatMap { $0 }
        #expect(streamed == PlanJSONWriter.data(plan))
        #expect(try Plan.decode(json: Data(streamed)) == plan)
        #expect(pieces.count > 20)
        #expect(pieces.allSatisfy { $0.count < 64 * 1024 + 4096 })
    }

    @Test("16-byte sort keys never order two byte strings against memcmp order")
    func keysAgreeWithCompare() {
        let alphabet: [UInt8] = [0x01, 0x2F, 0x41, 0x61, 0x62, 0x7F, 0x80, 0xFF]
        for _ in 0..<200 {
            let shared = Array(repeating: UInt8(0x61), count: Int.random(in: 0...9))
            let strings = (0..<40).map { _ in
                shared + (0..<Int.random(in: 0...24)).map { _ in alphabet.randomElement()! }
            }
            let offset = ByteOrder.sharedPrefix(strings.count) { strings[$0] }
            #expect(offset >= shared.count)
            for x in strings {
                for y in strings {
                    let kx = x.withUnsafeBufferPointer { ByteOrder.key($0, from: offset) }
                    let ky = y.withUnsafeBufferPointer { ByteOrder.key($0, from: offset) }
                    let c = ByteOrder.compare(x, y)
                    if kx != ky { #expect((kx < ky) == (c < 0), "\(x) \(y)") }
                    if c == 0 { #expect(kx == ky) }
                }
            }
        }
    }

    @Test("sixteen bytes at a time: indices in memcmp order of their strings, equal strings by the tie, at every length")
    func sortIndicesAgreesWithCompare() {
        // Few letters and long repeated pieces: most pairs share 16, 32 or 48 bytes and differ after them,
        // some are equal, some are prefixes of others (ending inside or exactly at a window's edge).
        let alphabet: [UInt8] = [0x01, 0x2D, 0x2F, 0x61, 0x7F, 0x80, 0xFF]
        let pieces: [[UInt8]] = [Array("t-267-0/".utf8), Array("scratch-20.dat/x".utf8), [0xFF, 0x80, 0x2F]]
        for round in 0..<300 {
            let shared = Array(repeating: UInt8(0x61), count: round % 7)
            let strings = (0..<(round % 50 + 2)).map { _ -> [UInt8] in
                var s = shared
                for _ in 0..<Int.random(in: 0...5) {
                    s += Bool.random() ? pieces.randomElement()! : [alphabet.randomElement()!]
                }
                return s
            }
            let offset = ByteOrder.sharedPrefix(strings.count) { strings[$0] }
            let ranks = strings.map { _ in Int.random(in: 0...2) }
            var order = Array(strings.indices).shuffled()
            ByteOrder.sortIndices(&order, from: offset, length: { strings[$0].count },
                                  key: { i, at in strings[i].withUnsafeBufferPointer { ByteOrder.key($0, from: at) } },
                                  tie: { x, y in (ranks[x], x) < (ranks[y], y) })
            let expected = strings.indices.sorted { x, y in
                let c = ByteOrder.compare(strings[x], strings[y])
                return c != 0 ? c < 0 : (ranks[x], x) < (ranks[y], y)
            }
            #expect(order == expected, "\(strings)")
        }
        // A key read whole (the window inside the string) is the bytes shifted in one by one.
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...40)).map { _ in UInt8.random(in: 1...255) }
            for offset in 0...bytes.count {
                var high: UInt64 = 0, low: UInt64 = 0
                for k in 0..<16 where offset + k < bytes.count {
                    if k < 8 { high |= UInt64(bytes[offset + k]) << (56 - 8 * UInt64(k)) }
                    else { low |= UInt64(bytes[offset + k]) << (56 - 8 * UInt64(k - 8)) }
                }
                #expect(bytes.withUnsafeBufferPointer { ByteOrder.key($0, from: offset) } == ByteOrder.Key16(high: high, low: low))
            }
        }
        // A long run of one path and its copies, 300 bytes deep: equal strings found past many windows.
        let deep = Array(repeating: Array("d/".utf8), count: 150).flatMap { $0 }
        let strings = [deep + [0x62], deep, deep + [0x61], deep, deep + [0x2F, 0x61]]
        var order = [4, 3, 2, 1, 0]
        ByteOrder.sortIndices(&order, from: 0, length: { strings[$0].count },
                              key: { i, at in strings[i].withUnsafeBufferPointer { ByteOrder.key($0, from: at) } },
                              tie: { $0 < $1 })
        #expect(order == [1, 3, 4, 2, 0])
    }

    @Test("the key quicksort orders sorted, reversed, equal, organ-pipe and random keys, with and without depth left")
    func sortByKey() {
        let n = 3_000
        let shapes: [[UInt64]] = [
            Array(0..<UInt64(n)), Array((0..<UInt64(n)).reversed()), Array(repeating: 7, count: n),
            (0..<UInt64(n)).map { $0 < UInt64(n / 2) ? $0 : UInt64(n) - $0 }, (0..<n).map { _ in UInt64.random(in: 0...50) },
            (0..<n).map { _ in UInt64.random(in: 0...UInt64.max) }, [], [1], [2, 1], Array((0..<17).reversed()),
        ]
        for values in shapes {
            for depth in [0, 1, 3, 64] {
                var entries = values.enumerated().map {
                    ByteOrder.Keyed(key: ByteOrder.Key16(high: $0.element / 3, low: $0.element % 3), index: $0.offset)
                }
                entries.withUnsafeMutableBufferPointer { e in
                    guard let base = e.baseAddress else { return }
                    ByteOrder.sortByKey(base, 0, e.count, depth: depth)
                }
                let keys = entries.map { ($0.key.high, $0.key.low) }
                #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 <= $1 }, "depth \(depth)")
                #expect(entries.map(\.index).sorted() == Array(values.indices))
            }
        }
    }

    @Test("permute puts actions[order[k]] at k for every kind of cycle, and moves each action whole")
    func permute() {
        for count in [0, 1, 2, 3, 10, 257] {
            let actions = (0..<count).map { i in
                Action(kind: i % 3 == 0 ? .rename(to: path("to-\(i)")) : .delete, path: path("p-\(i)"), rule: "r\(i)",
                       reason: "why \(i)", bytes: Int64(i))
            }
            for order in [Array(0..<count), Array((0..<count).reversed()), Array(0..<count).shuffled()] {
                var moved = actions
                ByteOrder.permute(&moved, order)
                #expect(moved == order.map { actions[$0] })
            }
        }
    }
}
