// Paths and actions in ByteOrder: the order plans are sorted in (Base/ByteOrder.swift holds the bytes part).

@_spi(Layers) import StoragePolicyFileSystem

extension ByteOrder {
    @inline(__always)
    package static func precedes(_ a: RelativePath, _ b: RelativePath) -> Bool { compare(a.bytes, b.bytes) < 0 }

    /// Sorts actions the way Plan.sort orders them (path bytes, rule, action, reason), moving each action
    /// once: Plan.sort then finds them in order and only checks.
    package static func sortActions(_ actions: inout [Action]) {
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
}
