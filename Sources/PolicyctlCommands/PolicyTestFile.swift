// `POLICY.test.yaml`: the tests `policyctl test` runs for a policy. Each test is a fixture tree, the instant it
// is judged at and the actions and violations expected. Read with the policy's own YAML reader, so a mistake is
// named at file:line:col as a policy's is (exit 65). See Docs/testing-policies.md.
import StoragePolicy

struct PolicyTestFile {
    /// One fixture entry. Its times are `at` minus `age`, so a test means the same whenever it runs.
    struct Entry {
        enum Kind: String { case file, directory, symlink }
        var path: RelativePath
        var kind: Kind
        var ageNs: Int64
        var content: [UInt8]
        var target: String?
        var owner: UInt32?
        var group: UInt32?
        var xattrs: [(name: String, value: [UInt8])]
    }

    struct Case {
        var name: String
        var mark: Mark
        var atNs: Int64
        var tree: [Entry]
        var actions: [String]
        var violations: [String]
        /// True when the tree names an owner or group: only root can build it.
        var needsRoot: Bool { tree.contains { $0.owner != nil || $0.group != nil } }
    }

    /// A mistake in the test file, at its place.
    struct Malformed: Error, CustomStringConvertible {
        var file: String
        var mark: Mark
        var message: String
        var description: String { "\(file):\(mark.line):\(mark.column): error: \(message)" }
    }

    var cases: [Case]

    static func parse(_ bytes: [UInt8], file: String) throws(Malformed) -> PolicyTestFile {
        let root: Node?
        do { root = try YAML.load(bytes) } catch { throw Malformed(file: file, mark: error.mark, message: error.message) }
        let reader = Reader(file: file)
        guard let root, let top = root.mapping else {
            throw Malformed(file: file, mark: root?.mark ?? Mark(line: 1, column: 1), message: "expected a mapping with 'tests:', found \(root?.kindName ?? "an empty file")")
        }
        try reader.only(["tests"], in: top, of: "the test file")
        guard let list = top.first(where: { $0.key.scalar == "tests" })?.value else {
            throw Malformed(file: file, mark: root.mark, message: "missing 'tests:', the list of tests")
        }
        let items = try reader.list(list, "tests")
        return PolicyTestFile(cases: try items.map { node throws(Malformed) in try reader.testCase(node) })
    }

    /// Reads one file's nodes; every refusal names its place and what would be valid.
    struct Reader {
        var file: String

        func fail(_ node: Node, _ message: String) -> Malformed { Malformed(file: file, mark: node.mark, message: message) }

        func mapping(_ node: Node, _ what: String) throws(Malformed) -> [(key: Node, value: Node)] {
            guard let pairs = node.mapping else { throw fail(node, "\(what): expected a mapping, found \(node.kindName)") }
            return pairs
        }

        func list(_ node: Node, _ what: String) throws(Malformed) -> [Node] {
            if node.isNull { return [] }
            guard let items = node.sequence else { throw fail(node, "'\(what)': expected a list, found \(node.kindName)") }
            return items
        }

        func string(_ node: Node, _ what: String) throws(Malformed) -> String {
            guard let text = node.scalar, !node.isNull else { throw fail(node, "'\(what)': expected a string, found \(node.kindName)") }
            return text
        }

        func only(_ keys: [String], in pairs: [(key: Node, value: Node)], of what: String) throws(Malformed) {
            for (key, _) in pairs where !keys.contains(key.scalar ?? "") {
                throw fail(key, "unknown key '\(key.scalar ?? key.kindName)' in \(what); expected one of: \(keys.joined(separator: ", "))")
            }
        }

        func testCase(_ node: Node) throws(Malformed) -> Case {
            let pairs = try mapping(node, "a test")
            try only(["name", "at", "tree", "expect"], in: pairs, of: "a test")
            func value(_ key: String) -> Node? { pairs.first { $0.key.scalar == key }?.value }
            guard let nameNode = value("name") else { throw fail(node, "a test needs 'name:'") }
            let name = try string(nameNode, "name")
            guard let atNode = value("at") else { throw fail(node, "test '\(name)' needs 'at:', the instant it is judged at (e.g. 2027-01-01T00:00Z)") }
            let atText = try string(atNode, "at")
            guard let at = InstantText.nanoseconds(atText) else {
                throw fail(atNode, "'at': '\(atText)' is not an instant; give \(InstantText.forms), e.g. 2027-01-01T00:00Z")
            }
            let tree = try value("tree").map { n throws(Malformed) in try list(n, "tree").map { e throws(Malformed) in try entry(e) } } ?? []
            var actions: [String] = []
            var violations: [String] = []
            if let expect = value("expect") {
                let e = try mapping(expect, "'expect'")
                try only(["actions", "violations"], in: e, of: "'expect'")
                for (key, v) in e {
                    let lines = try list(v, key.scalar!).map { n throws(Malformed) in try string(n, key.scalar!) }
                    if key.scalar == "actions" { actions = lines } else { violations = lines }
                }
            }
            return Case(name: name, mark: node.mark, atNs: at, tree: tree, actions: actions, violations: violations)
        }

        func entry(_ node: Node) throws(Malformed) -> Entry {
            let pairs = try mapping(node, "a tree entry")
            try only(["path", "type", "age", "size", "content", "target", "owner", "group", "xattrs"], in: pairs, of: "a tree entry")
            func value(_ key: String) -> Node? { pairs.first { $0.key.scalar == key }?.value }
            guard let pathNode = value("path") else { throw fail(node, "a tree entry needs 'path:', relative to the root") }
            let text = try string(pathNode, "path")
            guard let path = RelativePath(text), !path.isRoot, !text.hasPrefix("/"),
                  !path.components.contains(where: { $0.bytes == [0x2E, 0x2E] || $0.bytes == [0x2E] }) else {
                throw fail(pathNode, "'path': '\(text)' must be relative to the root, without '.' or '..'")
            }
            var kind = Entry.Kind.file
            if let t = value("type") {
                let word = try string(t, "type")
                guard let k = Entry.Kind(rawValue: word) else { throw fail(t, "'type': '\(word)' is not one of: file, directory, symlink") }
                kind = k
            }
            var age: Int64 = 0
            if let a = value("age") {
                let word = try string(a, "age")
                guard let d = PolicyDuration(parsing: word) else { throw fail(a, "'age': '\(word)' is not a duration (e.g. 36h, 2d, 90m)") }
                age = d.nanoseconds
            }
            var content: [UInt8] = []
            if let c = value("content") {
                guard kind == .file else { throw fail(c, "'content' is for a file, not a \(kind.rawValue)") }
                content = Array(try string(c, "content").utf8)
            }
            if let s = value("size") {
                let word = try string(s, "size")
                guard kind == .file, value("content") == nil else { throw fail(s, "'size' is for a file without 'content'") }
                guard let size = ByteSize(parsing: word), size.bytes <= 1 << 24 else {
                    throw fail(s, "'size': '\(word)' is not a size of at most 16MiB (e.g. 10, 4KiB, 1MiB)")
                }
                content = [UInt8](repeating: 0x61, count: Int(size.bytes))
            }
            var target: String?
            if let t = value("target") {
                guard kind == .symlink else { throw fail(t, "'target' is for 'type: symlink'") }
                target = try string(t, "target")
            } else if kind == .symlink {
                throw fail(node, "a symlink needs 'target:'")
            }
            var xattrs: [(String, [UInt8])] = []
            if let x = value("xattrs") {
                for (k, v) in try mapping(x, "'xattrs'") {
                    let name = try string(k, "xattrs")
                    guard name.hasPrefix("user.") else { throw fail(k, "'xattrs': '\(name)' is not a user.* attribute (the only ones a test sets)") }
                    xattrs.append((name, Array(try string(v, name).utf8)))
                }
            }
            return Entry(path: path, kind: kind, ageNs: age, content: content, target: target,
                         owner: try id(value("owner"), "owner"), group: try id(value("group"), "group"), xattrs: xattrs)
        }

        /// An owner or group: a number, so a test means the same on every machine (names differ between hosts).
        func id(_ node: Node?, _ what: String) throws(Malformed) -> UInt32? {
            guard let node else { return nil }
            let word = try string(node, what)
            guard let n = UInt32(word) else { throw fail(node, "'\(what)': '\(word)' is not a numeric id (names differ between hosts; give e.g. 12345)") }
            return n
        }
    }
}
