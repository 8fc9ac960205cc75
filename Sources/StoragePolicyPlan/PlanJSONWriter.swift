// Writes a plan as pretty JSON (keys sorted, as Plan's Codable form) in chunks, so a plan of a million
// actions never exists twice in memory as one string. Must decode with Plan.decode(json:) to the same plan.

@_spi(Layers) import StoragePolicyFileSystem

/// Writes a plan as JSON in chunks, so a plan with a million actions is never one string in memory.
/// Noncopyable: it owns its buffer (two copies can never write into one).
package struct PlanJSONWriter: ~Copyable {
    /// The bytes not yet flushed, in the engine's one JSON writer: a piece is one bounds check and one copy.
    /// An Array's append cost a uniqueness and capacity check and a generic copy per piece, about twenty
    /// pieces per action (a third of a large plan's instructions went there).
    package var out = JSONWriter(capacity: PlanJSONWriter.chunk + 4096)
    private let flush: ([UInt8]) throws -> Void
    static let chunk = 64 * 1024
    /// Per memo slot: the text last written and its JSON form (see `string(_:memo:)`).
    private var memoText = [String](repeating: "", count: 4)
    private var memoBytes = [[UInt8]](repeating: [0x22, 0x22], count: 4)

    /// How empty arrays and the end look: the two layouts a plan's JSON has always had.
    package enum Layout {
        /// What `plan --format json` and `--out` write: `[]`, and a final newline.
        case plan
        /// What JSONEncoder's `.prettyPrinted` wrote for `Plan.jsonData()`: `[` blank line `]`, no final newline.
        case encoder
    }
    private let layout: Layout

    /// `flush` receives the JSON in pieces of about 64 KiB, in order.
    package init(layout: Layout = .plan, flush: @escaping ([UInt8]) throws -> Void) {
        self.layout = layout
        self.flush = flush
    }

    /// The whole plan as one byte array (for small plans and tests).
    package static func data(_ plan: Plan, layout: Layout = .plan) -> [UInt8] {
        var out: [UInt8] = []
        var writer = PlanJSONWriter(layout: layout) { out.append(contentsOf: $0) }
        try? writer.write(plan)
        return out
    }

    /// Writes the whole plan; rethrows what the sink throws.
    package mutating func write(_ plan: Plan) throws {
        text("{\n")
        // Actions by index and borrowed: copying a million of them would retain every field of each.
        key("actions", 1)
        if plan.actions.isEmpty { emptyArray(1) } else {
            text("[\n")
            try actions(plan.actions)
            text("\n"); indent(1); text("]")
        }
        if let asOf = plan.asOf { text(",\n"); key("asOf", 1); string(asOf) }
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
        if let q = plan.quarantine {
            text(",\n"); key("quarantine", 1); text("{\n")
            var first = true
            if let exempt = q.exempt {
                field("exempt", 2, &first)
                text("[\n")
                for (i, e) in exempt.enumerated() {
                    if i > 0 { text(",\n") }
                    indent(3)
                    object(4) { w, first in
                        w.field("path", 4, &first); w.out.string(path: e.path)
                        if !e.path.isUTF8 { w.field("pathBase64", 4, &first); w.string(e.path.base64) }
                        w.field("reason", 4, &first); w.string(e.reason)
                    }
                }
                text("\n"); indent(2); text("]")
            }
            field("windows", 2, &first); text("{\n")
            var firstRule = true
            for (rule, window) in q.windows.sorted(by: { $0.key < $1.key }) { field(rule, 3, &firstRule); string(window) }
            text("\n"); indent(2); text("}")
            text("\n"); indent(1); text("}")
        }
        text(",\n"); key("root", 1); string(plan.root)
        text(",\n")
        try array("skipped", plan.skipped, indent: 1) { w, s in
            w.object(3) { w, first in
                w.field("path", 3, &first); w.out.string(path: s.path)
                if !s.path.isUTF8 { w.field("pathBase64", 3, &first); w.string(s.path.base64) }
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
        if let byRule = plan.summary.bytesFreedByRule {
            // Never empty (nil without deletes), so no empty-object layout is needed.
            indent(2); key("bytesFreedByRule", nil); text("{\n")
            var firstRule = true
            for (rule, bytes) in byRule.sorted(by: { $0.key < $1.key }) { field(rule, 3, &firstRule); number(bytes) }
            text("\n"); indent(2); text("},\n")
        }
        if let entries = plan.summary.deleteEntries { indent(2); key("deleteEntries", nil); number(entries); text(",\n") }
        indent(2); key("entriesScanned", nil); number(plan.summary.entriesScanned); text(",\n")
        indent(2); key("skipped", nil); number(plan.summary.skipped); text(",\n")
        indent(2); key("violations", nil); number(plan.summary.violations)
        if let volumes = plan.summary.volumes {
            text(",\n")
            try array("volumes", volumes, indent: 2) { w, v in
                w.object(4) { w, first in
                    w.field("bytesFreed", 4, &first); w.number(v.bytesFreed)
                    w.field("device", 4, &first); w.number(v.device)
                    if let f = v.freeBefore { w.field("freeBefore", 4, &first); w.number(f) }
                    if let t = v.size { w.field("size", 4, &first); w.number(t) }
                }
            }
        }
        text("\n")
        indent(1); text("}")
        text(",\n"); key("version", 1); number(plan.version)
        text(",\n")
        try array("violations", plan.violations, indent: 1) { w, v in
            w.object(3) { w, first in
                w.field("message", 3, &first); w.string(v.message)
                w.field("path", 3, &first); w.out.string(path: v.path)
                if !v.path.isUTF8 { w.field("pathBase64", 3, &first); w.string(v.path.base64) }
                w.field("rule", 3, &first); w.string(v.rule)
                w.field("severity", 3, &first); w.string(v.severity.rawValue)
            }
        }
        text(layout == .plan ? "\n}\n" : "\n}")
        try flushIfNeeded(force: true)
    }

    // MARK: Pieces

    package mutating func action(_ p: UnsafePointer<Action>) {
        // Read in place: a copy of the action retained and released every field of it.
        let a = UnsafePointer(p)
        // Each key comes with its comma, newline and indent as one literal: a plan of a million actions spends
        // its time here, and one append per piece is what it costs (same bytes as `key` and `indent` write).
        text("{\n      \"action\" : "); string(a.pointee.kind.name, memo: 0)
        text(",\n      \"bytes\" : "); number(a.pointee.bytes)
        if case .mkfile(let content, _, _, _) = a.pointee.kind { bytesField(false, content) }
        if a.pointee.entries != 1 { text(",\n      \"entries\" : "); number(a.pointee.entries) }
        if let (_, _, group) = Self.permissions(a.pointee.kind), let group { text(",\n      \"group\" : "); number(Int64(group)) }
        if let id = a.pointee.identity {
            text(",\n      \"identity\" : {\n        \"dev\" : "); number(id.device)
            text(",\n        \"ino\" : "); number(id.inode)
            text(",\n        \"mtimeNs\" : "); number(id.modificationTimeNs)
            text(",\n        \"size\" : "); number(id.size)
            text("\n      }")
        }
        if let (mode, _, _) = Self.permissions(a.pointee.kind), let mode { text(",\n      \"mode\" : "); string(Action.octal(mode)) }
        switch a.pointee.kind {
        case .setxattr(let name, _), .unmark(let name): text(",\n      \"name\" : "); string(name)
        default: break
        }
        if let (_, owner, _) = Self.permissions(a.pointee.kind), let owner { text(",\n      \"owner\" : "); number(Int64(owner)) }
        text(",\n      \"path\" : "); out.string(path: a.pointee.path)
        if !a.pointee.path.isUTF8 { text(",\n      \"pathBase64\" : "); string(a.pointee.path.base64) }
        text(",\n      \"reason\" : "); string(a.pointee.reason, memo: 1)
        text(",\n      \"rule\" : "); string(a.pointee.rule, memo: 2)
        if case .symlink(let target) = a.pointee.kind { bytesField(true, target) }
        switch a.pointee.kind {
        case .rename(let to), .trash(let to):
            text(",\n      \"to\" : "); out.string(path: to)
            if !to.isUTF8 { text(",\n      \"toBase64\" : "); string(to.base64) }
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

    /// The mode, owner and group a set-perms or mkfile action sets; nil for every other kind.
    static func permissions(_ kind: Action.Kind) -> (UInt32?, UInt32?, UInt32?)? {
        switch kind {
        case .setPermissions(let m, let o, let g), .mkfile(_, let m, let o, let g): (m, o, g)
        default: nil
        }
    }

    /// `"content" : "..."`, or `"contentBase64"` when the bytes are not UTF-8 (as `value` and `valueBase64`).
    private mutating func bytesField(_ target: Bool, _ bytes: [UInt8]) {
        if let t = String(validating: bytes, as: UTF8.self) {
            text(target ? ",\n      \"target\" : " : ",\n      \"content\" : "); string(t)
        } else {
            text(target ? ",\n      \"targetBase64\" : " : ",\n      \"contentBase64\" : "); string(Base64.encode(bytes))
        }
    }

    private mutating func array<T>(_ name: String, _ items: [T], indent level: Int,
                                   _ element: (inout PlanJSONWriter, T) -> Void) throws {
        key(name, level)
        if items.isEmpty { emptyArray(level); return }
        text("[\n")
        for (i, item) in items.enumerated() {
            if i > 0 { text(",\n") }
            indent(level + 1)
            element(&self, item)
            try flushIfNeeded(force: false)
        }
        text("\n"); indent(level); text("]")
    }

    /// An empty array whose key is at `level`.
    private mutating func emptyArray(_ level: Int) {
        if layout == .plan { text("[]"); return }
        text("[\n\n"); indent(level); text("]")
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

    mutating func indent(_ level: Int) { out.indent(level) }

    @inline(__always)
    package mutating func text(_ s: StaticString) { out.literal(s) }

    // Through the writer's non-generic digits: this generic is specialised here, in the plan's own module, while
    // one across the target boundary would not be (Docs/performance.md).
    private mutating func number<N: BinaryInteger>(_ n: N) { out.decimal(negative: n < 0, magnitude: UInt64(n.magnitude)) }

    /// A JSON string, escaped as JSONEncoder escapes (the plan's Codable form and this writer agree).
    private mutating func string(_ s: String) { out.string(s) }

    /// `string(s)` for a field most actions repeat (kind, rule, reason, type): when `s` is the text this
    /// memo slot last wrote, its escaped bytes are copied again, in one piece.
    private mutating func string(_ s: String, memo slot: Int) {
        if s == memoText[slot] {
            memoBytes[slot].withUnsafeBufferPointer { out.bytes($0.baseAddress!, $0.count) }
            return
        }
        let start = out.count
        string(s)
        memoText[slot] = s
        memoBytes[slot].removeAll(keepingCapacity: true)
        out.withBytes { memoBytes[slot].append(contentsOf: $0[start...]) }
    }

    mutating func flushIfNeeded(force: Bool) throws {
        guard force || out.count >= PlanJSONWriter.chunk else { return }
        if out.count > 0 { try flush(out.bytes) }
        out.removeAll()
    }
}
