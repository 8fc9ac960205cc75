// Reader: turns YAML bytes into Node trees through libyaml's event API, one loop, no recursion.
// Never crashes, hangs or overflows the stack on any input: every failure is a YAMLError with a line and column.
internal import CYAML

/// Reading YAML sources into `Node` trees.
///
///     guard let root = try YAML.load(bytes) else { /* empty file */ }
///
/// Beyond libyaml's own checks, the reader refuses duplicate keys, merge keys (`<<`), unknown and
/// self-referencing aliases, alias expansion past `Limits.maxAliasExpansion` nodes and nesting deeper
/// than `Limits.maxDepth`.
package enum YAML: Sendable {
    /// Bounds that keep hostile input from exhausting memory or the stack of whoever walks the tree.
    package struct Limits: Sendable, Hashable {
        /// Most collections nested in one another, counting those reached through aliases.
        package var maxDepth: Int
        /// Most nodes that aliases may add to a stream (an alias adds the whole node it refers to).
        /// Literal nodes are not counted: they are bounded by the input's size already.
        package var maxAliasExpansion: Int

        package init(maxDepth: Int = 512, maxAliasExpansion: Int = 100_000) {
            self.maxDepth = maxDepth
            self.maxAliasExpansion = maxAliasExpansion
        }
    }

    /// The single document in `bytes`, or nil when there is none (empty input, only comments).
    /// Throws when a second document follows: policy files hold one document.
    package static func load(_ bytes: [UInt8], limits: Limits = Limits()) throws(YAMLError) -> Node? {
        let reader = try YAMLReader(bytes, limits: limits)
        guard let document = try reader.nextDocument() else { return nil }
        if let second = try reader.nextDocumentStart() {
            throw YAMLError(mark: second, message: "policy files hold one document, but a second one starts here")
        }
        return document
    }

    package static func load(_ text: String, limits: Limits = Limits()) throws(YAMLError) -> Node? {
        try load(Array(text.utf8), limits: limits)
    }

    /// Every document in `bytes`, in order; empty when there is none.
    package static func loadAll(_ bytes: [UInt8], limits: Limits = Limits()) throws(YAMLError) -> [Node] {
        let reader = try YAMLReader(bytes, limits: limits)
        var documents: [Node] = []
        while let document = try reader.nextDocument() {
            documents.append(document)
        }
        return documents
    }

    package static func loadAll(_ text: String, limits: Limits = Limits()) throws(YAMLError) -> [Node] {
        try loadAll(Array(text.utf8), limits: limits)
    }
}

/// Owns one libyaml parser and the input it reads. Not Sendable: use it from one task, then drop it.
package final class YAMLReader {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    /// libyaml keeps a pointer into this buffer, so it lives exactly as long as the parser.
    private let input: UnsafeMutableBufferPointer<UInt8>
    private let inputCount: Int
    private let limits: YAML.Limits
    /// Nodes added through aliases so far in this stream.
    private var aliasExpansion = 0
    private var atEnd = false

    package init(_ bytes: [UInt8], limits: YAML.Limits) throws(YAMLError) {
        self.limits = limits
        // Never a zero-sized allocation: libyaml is handed a real pointer even for empty input.
        input = .allocate(capacity: max(bytes.count, 1))
        inputCount = bytes.count
        _ = input.initialize(from: bytes)
        parser = .allocate(capacity: 1)
        guard yaml_parser_initialize(parser) == 1 else {
            parser.deallocate()
            input.deallocate()
            throw YAMLError(mark: Mark(line: 1, column: 1), message: "out of memory while starting the YAML parser")
        }
        yaml_parser_set_input_string(parser, input.baseAddress, bytes.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    // MARK: Documents

    /// The next document, or nil at the end of the stream.
    func nextDocument() throws(YAMLError) -> Node? {
        guard try nextDocumentStart() != nil else { return nil }
        return try composeDocument()
    }

    /// Consumes events up to and including the next document's start and returns its mark,
    /// or nil at the end of the stream.
    func nextDocumentStart() throws(YAMLError) -> Mark? {
        while !atEnd {
            switch try nextEvent() {
            case .streamStart: continue
            case .documentStart(let mark): return mark
            case .streamEnd: atEnd = true
            case let other: throw unexpected(other)
            }
        }
        return nil
    }

    /// A collection being built: the reader's explicit stack, so depth never costs native stack.
    private struct Frame {
        let isMapping: Bool
        let mark: Mark
        let tag: String?
        let anchor: String?
        var items: [Node] = []
        var pairs: [(key: Node, value: Node)] = []
        /// A mapping's key whose value has not arrived yet.
        var pendingKey: Node?
        /// First mark of each scalar key, to name both places when a key repeats.
        var keys: [KeyIdentity: Mark] = [:]
        /// Nodes in this collection with aliases expanded, itself included: what an alias to it costs.
        var size = 1
        /// Collections on the longest path down from here, itself included.
        var height = 1

        var node: Node {
            Node(isMapping ? .mapping(pairs) : .sequence(items), mark: mark, tag: tag)
        }
    }

    /// A scalar key as the policy decoder will see it: its text and tag, whatever its quoting.
    private struct KeyIdentity: Hashable {
        let value: String
        let tag: String?
    }

    private struct Anchored {
        let node: Node
        let size: Int
        let height: Int
    }

    /// Builds the document whose start event was just read; consumes its end event.
    private func composeDocument() throws(YAMLError) -> Node {
        var stack: [Frame] = []
        var anchors: [String: Anchored] = [:]  // anchors are scoped to their document
        var root: Node?

        // Hands a finished node to its parent (or makes it the root) and records its anchor.
        func finish(_ node: Node, size: Int, height: Int, anchor: String?) throws(YAMLError) {
            if let anchor {
                anchors[anchor] = Anchored(node: node, size: size, height: height)
            }
            guard !stack.isEmpty else {
                root = node
                return
            }
            try add(node, size: size, height: height, to: &stack[stack.count - 1])
        }

        while true {
            switch try nextEvent() {
            case let .scalar(value, style, tag, anchor, mark):
                try finish(Node(.scalar(value, style: style), mark: mark, tag: tag), size: 1, height: 0, anchor: anchor)

            case let .alias(name, mark):
                guard let target = anchors[name] else {
                    if stack.contains(where: { $0.anchor == name }) {
                        throw YAMLError(
                            mark: mark, message: "alias '*\(name)' refers to a node that contains it; recursive structures are not supported")
                    }
                    throw YAMLError(mark: mark, message: "unknown alias '*\(name)': no anchor '&\(name)' before it in this document")
                }
                aliasExpansion += target.size
                guard aliasExpansion <= limits.maxAliasExpansion else {
                    throw YAMLError(
                        mark: mark,
                        message: "alias expansion exceeds \(limits.maxAliasExpansion) nodes at alias '*\(name)'; refusing a possible alias bomb")
                }
                guard stack.count + target.height <= limits.maxDepth else {
                    throw YAMLError(mark: mark, message: "nesting exceeds \(limits.maxDepth) levels through alias '*\(name)'")
                }
                // Shares the anchor's storage; only the top node takes the alias's own mark, so an error
                // about this value points where it is used.
                var node = target.node
                node.mark = mark
                try finish(node, size: target.size, height: target.height, anchor: nil)

            case let .sequenceStart(tag, anchor, mark):
                try checkDepth(stack.count + 1, at: mark)
                stack.append(Frame(isMapping: false, mark: mark, tag: tag, anchor: anchor))

            case let .mappingStart(tag, anchor, mark):
                try checkDepth(stack.count + 1, at: mark)
                stack.append(Frame(isMapping: true, mark: mark, tag: tag, anchor: anchor))

            case .sequenceEnd, .mappingEnd:
                guard let frame = stack.popLast() else {
                    throw YAMLError(mark: Mark(parser.pointee.mark), message: "internal error: collection end without a start")
                }
                try finish(frame.node, size: frame.size, height: frame.height, anchor: frame.anchor)

            case .documentEnd:
                // libyaml gives an empty document an empty plain scalar, so a root always exists here.
                guard let root else {
                    throw YAMLError(mark: Mark(parser.pointee.mark), message: "internal error: document without a root node")
                }
                return root

            case let other:
                throw unexpected(other)
            }
        }
    }

    private func checkDepth(_ depth: Int, at mark: Mark) throws(YAMLError) {
        guard depth <= limits.maxDepth else {
            throw YAMLError(mark: mark, message: "nesting exceeds \(limits.maxDepth) levels")
        }
    }

    /// Appends a finished child to the collection being built, checking keys as they arrive.
    private func add(_ node: Node, size: Int, height: Int, to frame: inout Frame) throws(YAMLError) {
        frame.size += size
        frame.height = max(frame.height, height + 1)
        if !frame.isMapping {
            frame.items.append(node)
        } else if let key = frame.pendingKey {
            frame.pairs.append((key: key, value: node))
            frame.pendingKey = nil
        } else {
            if case .scalar(let value, let style) = node.kind {
                if node.tag == "tag:yaml.org,2002:merge" || (node.tag == nil && style == .plain && value == "<<") {
                    throw YAMLError(mark: node.mark, message: "merge keys ('<<') are not supported: write the keys out in full")
                }
                let identity = KeyIdentity(value: value, tag: node.tag)
                if let first = frame.keys[identity] {
                    throw YAMLError(mark: node.mark, message: "duplicate key \(quoted(value)) (first at \(first))")
                }
                frame.keys[identity] = node.mark
            }
            frame.pendingKey = node
        }
    }

    // MARK: Events

    /// One libyaml event, copied out of C memory so it can be freed at once.
    private enum Event {
        case streamStart, streamEnd
        case documentStart(Mark)
        case documentEnd
        case alias(String, Mark)
        case scalar(String, Node.ScalarStyle, tag: String?, anchor: String?, Mark)
        case sequenceStart(tag: String?, anchor: String?, Mark)
        case sequenceEnd
        case mappingStart(tag: String?, anchor: String?, Mark)
        case mappingEnd
        case none
    }

    private func nextEvent() throws(YAMLError) -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else {
            throw parserError()
        }
        defer { yaml_event_delete(&event) }
        let mark = Mark(event.start_mark)
        switch event.type {
        case YAML_STREAM_START_EVENT:
            return .streamStart
        case YAML_STREAM_END_EVENT:
            return .streamEnd
        case YAML_DOCUMENT_START_EVENT:
            return .documentStart(mark)
        case YAML_DOCUMENT_END_EVENT:
            return .documentEnd
        case YAML_ALIAS_EVENT:
            return .alias(string(event.data.alias.anchor) ?? "", mark)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            // By length, not cString: a double-quoted "\0" puts a NUL inside the value.
            let value = scalar.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self) } ?? ""
            return .scalar(value, style(scalar.style), tag: string(scalar.tag), anchor: string(scalar.anchor), mark)
        case YAML_SEQUENCE_START_EVENT:
            let start = event.data.sequence_start
            return .sequenceStart(tag: string(start.tag), anchor: string(start.anchor), mark)
        case YAML_SEQUENCE_END_EVENT:
            return .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            let start = event.data.mapping_start
            return .mappingStart(tag: string(start.tag), anchor: string(start.anchor), mark)
        case YAML_MAPPING_END_EVENT:
            return .mappingEnd
        default:
            return .none
        }
    }

    private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private func style(_ style: yaml_scalar_style_t) -> Node.ScalarStyle {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: return .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: return .literal
        case YAML_FOLDED_SCALAR_STYLE: return .folded
        default: return .plain
        }
    }

    private func unexpected(_ event: Event) -> YAMLError {
        YAMLError(mark: Mark(parser.pointee.mark), message: "internal error: unexpected YAML event \(event)")
    }

    // MARK: Errors

    /// libyaml's error, located in the file. Reader errors (bad encoding, control characters) carry only
    /// a byte offset and a zero mark, so their line and column are recomputed from the input.
    private func parserError() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unknown YAML error"
        switch state.error {
        case YAML_READER_ERROR:
            var message = problem
            if state.problem_value != -1 {
                let hex = String(UInt32(truncatingIfNeeded: state.problem_value), radix: 16, uppercase: true)
                // An octet for the UTF-8 errors, a character for the others ("control characters ...").
                message += problem.hasSuffix("octet") ? " (0x\(hex))" : " (U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex))"
            }
            return YAMLError(mark: mark(atByte: state.problem_offset, encoding: state.encoding), message: message)
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
            let context = state.context.map { "\(String(cString: $0)) at \(Mark(state.context_mark))" }
            return YAMLError(mark: Mark(state.problem_mark), message: problem, context: context)
        case YAML_MEMORY_ERROR:
            return YAMLError(mark: Mark(state.mark), message: "out of memory while reading YAML")
        default:
            return YAMLError(mark: Mark(state.mark), message: problem)
        }
    }

    /// The line and column of a byte offset, counted as libyaml counts: a column per character, and
    /// CR LF, CR, LF, NEL, LS and PS each end a line. The bytes before `offset` already passed libyaml's
    /// decoder, so they are well formed.
    private func mark(atByte offset: Int, encoding: yaml_encoding_t) -> Mark {
        let bytes = UnsafeBufferPointer(rebasing: input[0..<min(offset, inputCount)])
        var line = 1
        var column = 1
        var index = 0
        let utf16 = encoding == YAML_UTF16LE_ENCODING || encoding == YAML_UTF16BE_ENCODING

        // One character at `index`: its code point (or a stand-in) and its width in bytes.
        func character(at index: Int) -> (UInt32, Int) {
            if utf16 {
                guard index + 1 < bytes.count else { return (0xFFFD, bytes.count - index) }
                let unit = encoding == YAML_UTF16LE_ENCODING
                    ? UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    : UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
                return (unit, (0xD800..<0xDC00).contains(unit) ? 4 : 2)
            }
            let lead = bytes[index]
            switch lead {
            case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0x85:
                return (0x85, 2)
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] | 1) == 0xA9:
                return (0x2000 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F), 3)
            default:
                let width = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
                return (UInt32(lead), width)
            }
        }

        // libyaml skips a byte-order mark without counting a column for it.
        if utf16 {
            index = 2
        } else if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            index = 3
        }
        while index < bytes.count {
            let (code, width) = character(at: index)
            // An offset inside a malformed character names that character, not the byte after its lead.
            guard index + width <= bytes.count else { break }
            index += width
            switch code {
            case 0x0D:
                line += 1
                column = 1
                if index < bytes.count, character(at: index).0 == 0x0A {
                    index += character(at: index).1
                }
            case 0x0A, 0x85, 0x2028, 0x2029:
                line += 1
                column = 1
            default:
                column += 1
            }
        }
        return Mark(line: line, column: column)
    }
}

/// A value for an error message: quoted, on one line, and cut short so one huge key cannot flood a terminal.
private func quoted(_ value: String) -> String {
    let head = value.prefix(60)
    let text = head.unicodeScalars.map { $0 == "\n" ? "\\n" : String($0) }.joined()
    return "'\(text)\(head.endIndex < value.endIndex ? "..." : "")'"
}
