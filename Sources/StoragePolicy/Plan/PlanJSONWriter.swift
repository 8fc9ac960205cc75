// Writes a plan as pretty JSON (keys sorted, as Plan's Codable form) in chunks, so a plan of a million
// actions never exists twice in memory as one string. Must decode with Plan.decode(json:) to the same plan.

/// Writes a plan as JSON in chunks, so a plan with a million actions is never one string in memory.
package struct PlanJSONWriter {
    private let buffer = Bytes(capacity: PlanJSONWriter.chunk + 4096)
    private let flush: ([UInt8]) throws -> Void
    private static let chunk = 64 * 1024

    /// The bytes not yet flushed, in memory this writer owns: a piece is one bounds check and one copy.
    /// An Array's append cost a uniqueness and capacity check and a generic copy per piece, about twenty
    /// pieces per action (a third of a large plan's instructions went there).
    /// Only its writer touches it, one access at a time: no dynamic exclusivity checks (they cost more than
    /// the copies they guarded).
    private final class Bytes {
        @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
        @exclusivity(unchecked) var capacity: Int
        @exclusivity(unchecked) var count = 0
        /// Per memo slot: the text last written and its JSON form (see `string(_:memo:)`).
        @exclusivity(unchecked) var memoText = [String](repeating: "", count: 4)
        @exclusivity(unchecked) var memoBytes = [[UInt8]](repeating: [0x22, 0x22], count: 4)

        init(capacity: Int) {
            base = .allocate(capacity: capacity)
            self.capacity = capacity
        }

        deinit { base.deallocate() }

        /// Room for `n` more bytes (a long path escaped can outgrow the chunk).
        @inline(__always)
        func reserve(_ n: Int) {
            if count + n > capacity { grow(n) }
        }

        private func grow(_ n: Int) {
            let larger = max(capacity * 2, count + n)
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
            moved.update(from: base, count: count)
            base.deallocate()
            base = moved
            capacity = larger
        }

        @inline(__always)
        func append(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
            reserve(n)
            (base + count).update(from: bytes, count: n)
            count += n
        }

        @inline(__always)
        func append(_ byte: UInt8) {
            reserve(1)
            base[count] = byte
            count += 1
        }
    }

    /// `flush` receives the JSON in pieces of about 64 KiB, in order.
    package init(flush: @escaping ([UInt8]) throws -> Void) {
        self.flush = flush
    }

    /// The whole plan as one byte array (for small plans and tests).
    package static func data(_ plan: Plan) -> [UInt8] {
        var out: [UInt8] = []
        var writer = PlanJSONWriter { out.append(contentsOf: $0) }
        try? writer.write(plan)
        return out
    }

    /// Writes the whole plan; rethrows what the sink throws.
    package mutating func write(_ plan: Plan) throws {
        text("{\n")
        // Actions by index and borrowed: copying a million of them would retain every field of each.
        key("actions", 1)
        if plan.actions.isEmpty { text("[]") } else {
            text("[\n")
            try actions(plan.actions)
            text("\n"); indent(1); text("]")
        }
        text(",\n"); key("createdAt", 1); string(plan.createdAt)
        text(",\n"); key("evaluatedAtNs", 1); number(plan.evaluatedAtNs)
        if let f = plan.fingerprint {
            text(",\n"); key("fingerprint", 1); text("{\n")
            var first = true
            if let p = f.policyPath { field("policyPath", 2, &first); string(p) }
            field("policySHA256", 2, &first); string(f.policySHA256)
            field("rootDevice", 2, &first); number(f.rootDevice)
            field("rootInode", 2, &first); number(f.rootInode)
            text("\n"); indent(1); text("}")
        }
        text(",\n")
        try array("notes", plan.notes, indent: 1) { w, n in w.string(n) }
        text(",\n"); key("policy", 1); string(plan.policy)
        text(",\n"); key("root", 1); string(plan.root)
        text(",\n")
        try array("skipped", plan.skipped, indent: 1) { w, s in
            w.object(3) { w, first in
                w.field("path", 3, &first); w.string(path: s.path)
                if !PlanJSONWriter.isUTF8(s.path) { w.field("pathBase64", 3, &first); w.string(s.path.base64) }
                w.field("reason", 3, &first); w.string(s.reason)
            }
        }
        text(",\n"); key("summary", 1); text("{\n")
        indent(2); key("actions", nil); text("{\n")
        var first = true
        for (name, count) in plan.summary.actions.sorted(by: { $0.key < $1.key }) {
            field(name, 3, &first); number(count)
        }
        text("\n"); indent(2); text("},\n")
        indent(2); key("bytesFreed", nil); number(plan.summary.bytesFreed); text(",\n")
        if let entries = plan.summary.deleteEntries { indent(2); key("deleteEntries", nil); number(entries); text(",\n") }
        indent(2); key("entriesScanned", nil); number(plan.summary.entriesScanned); text(",\n")
        indent(2); key("skipped", nil); number(plan.summary.skipped); text(",\n")
        indent(2); key("violations", nil); number(plan.summary.violations); text("\n")
        indent(1); text("}")
        text(",\n"); key("version", 1); number(plan.version)
        text(",\n")
        try array("violations", plan.violations, indent: 1) { w, v in
            w.object(3) { w, first in
                w.field("message", 3, &first); w.string(v.message)
                w.field("path", 3, &first); w.string(path: v.path)
                if !PlanJSONWriter.isUTF8(v.path) { w.field("pathBase64", 3, &first); w.string(v.path.base64) }
                w.field("rule", 3, &first); w.string(v.rule)
                w.field("severity", 3, &first); w.string(v.severity.rawValue)
            }
        }
        text("\n}\n")
        try flushIfNeeded(force: true)
    }

    // MARK: Actions, on two threads

    /// Actions per block: a large plan's actions are written in blocks, every other one rendered by a
    /// second thread while this one renders the block before it (each about 0.7 MB of JSON).
    private static let block = 2048

    /// The actions, each after `,\n` but the first. With more than a few blocks and a second core, a second
    /// thread renders the odd blocks while this one renders the even ones and writes all of them in order,
    /// holding at most one finished block of the other's: the same bytes, about half the time.
    private mutating func actions(_ actions: [Action]) throws {
        let blocks = (actions.count + PlanJSONWriter.block - 1) / PlanJSONWriter.block
        guard blocks >= 4, WorkerThreads.availableCores >= 2 else {
            try render(actions, 0..<actions.count, flushing: true)
            return
        }
        let handoff = BlockHandoff()
        let side = WriterSide(self)
        WorkerThreads.run(count: 2) { index in
            if index == 1 {
                var helper = PlanJSONWriter { _ in }
                while let k = handoff.claim(blocks: blocks) {
                    try? helper.render(actions, PlanJSONWriter.range(k, of: actions.count), flushing: false)
                    handoff.finish(k, helper.takeBytes())
                }
                return
            }
            do {
                for k in 0..<blocks {
                    if k % 2 == 1, let rendered = handoff.take(k) {
                        try side.writer.append(rendered)
                    } else {
                        // Even blocks, and an odd one the other thread has not started (or never will).
                        try side.writer.render(actions, PlanJSONWriter.range(k, of: actions.count), flushing: true)
                        handoff.wrote(k)
                    }
                }
            } catch {
                side.error = error
            }
            handoff.stop()
        }
        if let error = side.error { throw error }
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

    /// What this writer holds and has not flushed, handed over (the writer starts empty again).
    private mutating func takeBytes() -> [UInt8] {
        let bytes = Array(UnsafeBufferPointer(start: buffer.base, count: buffer.count))
        buffer.count = 0
        return bytes
    }

    /// Another writer's bytes, written on in pieces of about the usual size.
    private mutating func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { all in
            var at = 0
            while at < all.count {
                let n = min(max(PlanJSONWriter.chunk - buffer.count, 1), all.count - at)
                buffer.append(all.baseAddress! + at, n)
                at += n
                try flushIfNeeded(force: false)
            }
        }
    }

    /// The writing thread's writer and what went wrong, reachable from the closure both threads run.
    private final class WriterSide: @unchecked Sendable {
        // @unchecked: only the writing thread (index 0) touches it.
        var writer: PlanJSONWriter
        var error: (any Error)?
        init(_ writer: PlanJSONWriter) { self.writer = writer }
    }

    /// Which odd blocks the second thread has claimed and finished, and how far the writer has got.
    private final class BlockHandoff: @unchecked Sendable {
        // @unchecked: every field is touched only with `lock` held.
        private var next = 1
        private var ready: [Int: [UInt8]] = [:]
        private var written = -1
        private var stopped = false
        private let lock = ConditionLock()

        /// The second thread's next block, once the writer is at most one block behind it; nil when there
        /// are no more or the writer stopped.
        func claim(blocks: Int) -> Int? {
            lock.withLock {
                while !stopped && next < blocks && next > written + 2 { lock.wait() }
                guard !stopped, next < blocks else { return nil }
                defer { next += 2 }
                return next
            }
        }

        func finish(_ k: Int, _ bytes: [UInt8]) {
            lock.withLock {
                ready[k] = bytes
                lock.broadcast()
            }
        }

        /// Block `k` as the second thread rendered it, waiting for it if it is under way; nil when that
        /// thread has not claimed it (the writer then claims and renders it itself).
        func take(_ k: Int) -> [UInt8]? {
            lock.withLock {
                if next <= k {
                    next = k + 2
                    return nil
                }
                while ready[k] == nil { lock.wait() }
                written = k
                lock.broadcast()
                return ready.removeValue(forKey: k)
            }
        }

        func wrote(_ k: Int) {
            lock.withLock {
                written = k
                lock.broadcast()
            }
        }

        func stop() {
            lock.withLock {
                stopped = true
                lock.broadcast()
            }
        }
    }

    // MARK: Pieces

    private mutating func action(_ p: UnsafePointer<Action>) {
        // Read in place: a copy of the action retained and released every field of it.
        let a = UnsafePointer(p)
        // Each key comes with its comma, newline and indent as one literal: a plan of a million actions spends
        // its time here, and one append per piece is what it costs (same bytes as `key` and `indent` write).
        text("{\n      \"action\" : "); string(a.pointee.kind.name, memo: 0)
        text(",\n      \"bytes\" : "); number(a.pointee.bytes)
        if a.pointee.entries != 1 { text(",\n      \"entries\" : "); number(a.pointee.entries) }
        if let id = a.pointee.identity {
            text(",\n      \"identity\" : {\n        \"dev\" : "); number(id.device)
            text(",\n        \"ino\" : "); number(id.inode)
            text(",\n        \"mtimeNs\" : "); number(id.modificationTimeNs)
            text(",\n        \"size\" : "); number(id.size)
            text("\n      }")
        }
        switch a.pointee.kind {
        case .setxattr(let name, _), .unmark(let name): text(",\n      \"name\" : "); string(name)
        default: break
        }
        text(",\n      \"path\" : "); string(path: a.pointee.path)
        if !PlanJSONWriter.isUTF8(a.pointee.path) { text(",\n      \"pathBase64\" : "); string(a.pointee.path.base64) }
        text(",\n      \"reason\" : "); string(a.pointee.reason, memo: 1)
        text(",\n      \"rule\" : "); string(a.pointee.rule, memo: 2)
        switch a.pointee.kind {
        case .rename(let to), .trash(let to):
            text(",\n      \"to\" : "); string(path: to)
            if !PlanJSONWriter.isUTF8(to) { text(",\n      \"toBase64\" : "); string(to.base64) }
        default: break
        }
        if let t = a.pointee.type { text(",\n      \"type\" : "); string(t.rawValue, memo: 3) }
        if case .setxattr(_, let value) = a.pointee.kind {
            if let text = String(validating: value, as: UTF8.self) {
                self.text(",\n      \"value\" : "); string(text)
            } else {
                text(",\n      \"valueBase64\" : "); string(Base64.encode(value))
            }
        }
        text("\n    }")
    }

    private mutating func array<T>(_ name: String, _ items: [T], indent level: Int,
                                   _ element: (inout PlanJSONWriter, T) -> Void) throws {
        key(name, level)
        if items.isEmpty { text("[]"); return }
        text("[\n")
        for (i, item) in items.enumerated() {
            if i > 0 { text(",\n") }
            indent(level + 1)
            element(&self, item)
            try flushIfNeeded(force: false)
        }
        text("\n"); indent(level); text("]")
    }

    /// `{` ... `}` with fields at `level`; `body` writes fields with `field(_:_:&first)`.
    private mutating func object(_ level: Int, _ body: (inout PlanJSONWriter, inout Bool) -> Void) {
        text("{\n")
        var first = true
        body(&self, &first)
        text("\n"); indent(level - 1); text("}")
    }

    private mutating func field(_ name: String, _ level: Int, _ first: inout Bool) {
        if !first { text(",\n") }
        first = false
        key(name, level)
    }

    private mutating func key(_ name: String, _ level: Int?) {
        if let level { indent(level) }
        string(name)
        text(" : ")
    }

    private mutating func indent(_ level: Int) {
        buffer.reserve(level * 2)
        (buffer.base + buffer.count).update(repeating: 0x20, count: level * 2)
        buffer.count += level * 2
    }

    @inline(__always)
    private mutating func text(_ s: StaticString) {
        // A one-character literal may be stored as a scalar, without a pointer to its bytes.
        if s.hasPointerRepresentation {
            buffer.append(s.utf8Start, s.utf8CodeUnitCount)
        } else {
            s.withUTF8Buffer { buffer.append($0.baseAddress!, $0.count) }
        }
    }

    /// Decimal digits straight into the buffer (no String per number), two at a time from the right.
    private mutating func number<N: BinaryInteger>(_ n: N) {
        if n < 0 { buffer.append(0x2D) }
        var value = UInt64(n.magnitude)
        // The digit count first, by comparisons (no division), so the digits go straight to their place.
        var digits = 1
        var power: UInt64 = 10
        while value >= power {
            digits += 1
            if digits == 20 { break }
            power &*= 10
        }
        buffer.reserve(digits)
        var at = buffer.base + buffer.count + digits
        let pairs = PlanJSONWriter.pairs.utf8Start
        while value >= 100 {
            let pair = Int(value % 100) &* 2
            value /= 100
            at -= 2
            at[0] = pairs[pair]
            at[1] = pairs[pair + 1]
        }
        if value >= 10 {
            at -= 2
            at[0] = pairs[Int(value) &* 2]
            at[1] = pairs[Int(value) &* 2 + 1]
        } else {
            at -= 1
            at[0] = 0x30 + UInt8(value)
        }
        buffer.count += digits
    }

    /// "00" to "99", back to back.
    private static let pairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// A JSON string: quotes, backslashes and control characters escaped; everything else as UTF-8.
    private mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { escape($0) }
    }

    /// `string(s)` for a field most actions repeat (kind, rule, reason, type): when `s` is the text this
    /// memo slot last wrote, its escaped bytes are copied again, in one piece.
    private mutating func string(_ s: String, memo slot: Int) {
        if s == buffer.memoText[slot] {
            buffer.memoBytes[slot].withUnsafeBufferPointer { buffer.append($0.baseAddress!, $0.count) }
            return
        }
        let start = buffer.count
        string(s)
        buffer.memoText[slot] = s
        buffer.memoBytes[slot].removeAll(keepingCapacity: true)
        buffer.memoBytes[slot].append(contentsOf: UnsafeBufferPointer(start: buffer.base + start, count: buffer.count - start))
    }

    /// A path: its bytes as they are when they are UTF-8 (no String made), else the lossy text form
    /// (the exact bytes go in the `...Base64` field next to it).
    private mutating func string(path: RelativePath) {
        if PlanJSONWriter.isASCII(path) {
            path.bytes.withUnsafeBufferPointer { escape($0) }
        } else {
            string(path.string)
        }
    }

    private static func isUTF8(_ path: RelativePath) -> Bool {
        isASCII(path) || path.isValidUTF8
    }

    /// True when no byte has its high bit set, tested eight bytes at a time.
    private static func isASCII(_ path: RelativePath) -> Bool {
        path.bytes.withUnsafeBytes { raw in
            var i = 0
            var high: UInt64 = 0
            while i + 8 <= raw.count {
                high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < raw.count { high |= UInt64(raw[i]); i += 1 }
            return high & 0x8080_8080_8080_8080 == 0
        }
    }

    private mutating func escape(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(0x22)
        guard let base = bytes.baseAddress else { buffer.append(0x22); return }
        let n = bytes.count
        var start = 0
        var i = 0
        while i < n {
            // Eight bytes at a time while none of them needs escaping: most strings are copied in one piece.
            if i + 8 <= n, !PlanJSONWriter.needsEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            let b = base[i]
            i += 1
            guard b == 0x22 || b == 0x5C || b < 0x20 else { continue }
            if start < i - 1 { buffer.append(base + start, i - 1 - start) }
            start = i
            switch b {
            case 0x22: buffer.append(0x5C); buffer.append(0x22)
            case 0x5C: buffer.append(0x5C); buffer.append(0x5C)
            case 0x0A: buffer.append(0x5C); buffer.append(0x6E)
            case 0x0D: buffer.append(0x5C); buffer.append(0x72)
            case 0x09: buffer.append(0x5C); buffer.append(0x74)
            case 0x08: buffer.append(0x5C); buffer.append(0x62)
            case 0x0C: buffer.append(0x5C); buffer.append(0x66)
            default:
                let digits: StaticString = "0123456789abcdef"
                let d = digits.utf8Start
                for c in [0x5C, 0x75, 0x30, 0x30, d[Int(b >> 4)], d[Int(b & 0xF)]] as [UInt8] { buffer.append(c) }
            }
        }
        if start < n { buffer.append(base + start, n - start) }
        buffer.append(0x22)
    }

    /// True when one of the eight bytes is a quote, a backslash or below 0x20 (the classic zero-byte and
    /// less-than word tests, exact as a yes/no).
    @inline(__always)
    private static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w & highs
        let q = w ^ (ones &* 0x22), quote = (q &- ones) & ~q & highs
        let s = w ^ (ones &* 0x5C), slash = (s &- ones) & ~s & highs
        return (control | quote | slash) != 0
    }

    private mutating func flushIfNeeded(force: Bool) throws {
        guard force || buffer.count >= PlanJSONWriter.chunk else { return }
        if buffer.count > 0 { try flush(Array(UnsafeBufferPointer(start: buffer.base, count: buffer.count))) }
        buffer.count = 0
    }
}
