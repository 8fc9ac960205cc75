// A large plan's actions, rendered on two threads: a pool thread renders every other block while the calling
// thread renders the blocks between and writes all of them in order. The same bytes, about half the time.

@_spi(Layers) import StoragePolicyFileSystem

extension PlanJSONWriter {
    /// Actions per block (each about 0.7 MB of JSON).
    private static let block = 2048

    /// The actions, each after `,\n` but the first. With more than a few blocks and a second core, a pool
    /// thread renders the odd blocks while this one renders the even ones, holding at most one finished block
    /// of the other's. When the pool has no thread to give, this thread renders them all (never waits for one).
    package mutating func actions(_ actions: [Action]) throws {
        let blocks = (actions.count + PlanJSONWriter.block - 1) / PlanJSONWriter.block
        guard blocks >= 4, WorkerPool.availableCores >= 2 else {
            try render(actions, 0..<actions.count, flushing: true)
            return
        }
        let handoff = ConditionLocked(Handoff())
        guard let helper = WorkerPool.shared.start({ PlanJSONWriter.renderOddBlocks(actions, blocks, handoff) }) else {
            try render(actions, 0..<actions.count, flushing: true)
            return
        }
        // However this ends (a sink that throws included), the helper stops and has stopped before we return.
        defer {
            handoff.withLock(wake: .all) { $0.stopped = true }
            helper.wait()
        }
        for k in 0..<blocks {
            if k % 2 == 1, let rendered = PlanJSONWriter.take(k, from: handoff) {
                try append(rendered)
            } else {
                // Even blocks, and an odd one the helper has not started (or never will).
                try render(actions, PlanJSONWriter.range(k, of: actions.count), flushing: true)
                handoff.withLock(wake: .all) { $0.written = k }
            }
        }
    }

    /// The helper's side: claims odd blocks, at most one ahead of the writer, until none are left or it is
    /// told to stop.
    private static func renderOddBlocks(_ actions: [Action], _ blocks: Int, _ handoff: ConditionLocked<Handoff>) {
        var writer = PlanJSONWriter { _ in }
        while true {
            let claimed = handoff.withLock(when: { $0.stopped || $0.next >= blocks || $0.next <= $0.written + 2 }) { s -> Int? in
                guard !s.stopped, s.next < blocks else { return nil }
                defer { s.next += 2 }
                return s.next
            }
            guard let k = claimed else { return }
            try? writer.render(actions, range(k, of: actions.count), flushing: false)
            let bytes = writer.out.takeBytes()
            handoff.withLock(wake: .all) { $0.ready[k] = bytes }
        }
    }

    /// Block `k` as the helper rendered it, waiting for it if it is under way; nil when the helper has not
    /// claimed it (the writer then renders it itself, and the helper skips it).
    private static func take(_ k: Int, from handoff: ConditionLocked<Handoff>) -> [UInt8]? {
        handoff.withLock(when: { $0.next <= k || $0.ready[k] != nil }, wake: .all) { s -> [UInt8]? in
            if s.next <= k {
                s.next = k + 2
                return nil
            }
            s.written = k
            return s.ready.removeValue(forKey: k)
        }
    }

    /// Which odd blocks the helper has claimed and finished, and how far the writer has got.
    package struct Handoff {
        package var next = 1
        var ready: [Int: [UInt8]] = [:]
        package var written = -1
        package var stopped = false
    }

    private static func range(_ k: Int, of count: Int) -> Range<Int> {
        (k * block)..<min(count, (k + 1) * block)
    }

    private mutating func render(_ actions: [Action], _ range: Range<Int>, flushing: Bool) throws {
        try actions.withUnsafeBufferPointer { all in
            for i in range {
                if i > 0 { text(",\n") }
                indent(2)
                action(all.baseAddress! + i)
                if flushing { try flushIfNeeded(force: false) }
            }
        }
    }

    /// Another writer's bytes, written on in pieces of about the usual size.
    private mutating func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { all in
            var at = 0
            while at < all.count {
                let n = min(max(PlanJSONWriter.chunk - out.count, 1), all.count - at)
                out.bytes(all.baseAddress! + at, n)
                at += n
                try flushIfNeeded(force: false)
            }
        }
    }
}
