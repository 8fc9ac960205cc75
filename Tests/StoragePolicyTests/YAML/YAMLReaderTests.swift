// Tests of the YAML reader's node trees: marks, order, scalar styles, null, tags, documents.
// Never touches the file system: every input is written out here, so a failure shows its YAML.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("YAML reader: nodes and marks")
struct YAMLReaderTests {
    static let policy = """
        version: 1
        rules:
          - name: tmp-expiry
            path: "tmp"
            match: ['**/*.tmp', b]
            expire: {after: 24h}
        """

    @Test("every scalar, sequence and mapping carries its exact 1-based line and column")
    func marks() throws {
        let root = try #require(try YAML.load(Self.policy))
        #expect(root.mark == Mark(line: 1, column: 1))
        #expect(root["version"]?.mark == Mark(line: 1, column: 10))
        let rules = try #require(root["rules"])
        #expect(rules.mark == Mark(line: 3, column: 3))  // a block sequence starts at its first '-'
        let rule = try #require(rules.sequence?.first)
        #expect(rule.mark == Mark(line: 3, column: 5))  // a block mapping starts at its first key
        #expect(rule.mapping?.map(\.key.mark) == [3, 4, 5, 6].map { Mark(line: $0, column: 5) })
        #expect(rule["name"]?.mark == Mark(line: 3, column: 11))
        #expect(rule["path"]?.mark == Mark(line: 4, column: 11))  // a quoted scalar starts at its quote
        let match = try #require(rule["match"])
        #expect(match.mark == Mark(line: 5, column: 12))
        #expect(match.sequence?.map(\.mark) == [Mark(line: 5, column: 13), Mark(line: 5, column: 25)])
        let expire = try #require(rule["expire"])
        #expect(expire.mark == Mark(line: 6, column: 13))
        #expect(expire.mapping?.first?.key.mark == Mark(line: 6, column: 14))
        #expect(expire["after"]?.mark == Mark(line: 6, column: 21))
    }

    @Test("columns count characters, not bytes")
    func columnsCountCharacters() throws {
        let root = try #require(try YAML.load("é日: x\n"))
        #expect(root["é日"]?.mark == Mark(line: 1, column: 5))
    }

    @Test("CR LF line ends count as one line")
    func crlf() throws {
        let root = try #require(try YAML.load("a: 1\r\nb: 2\r\n"))
        #expect(root["b"]?.mark == Mark(line: 2, column: 4))
    }

    @Test("mapping keys and sequence items keep file order")
    func orderPreserved() throws {
        let root = try #require(try YAML.load("z: 1\na: 2\nm: [c, b, a]\nk: {y: 1, x: 2}\n"))
        #expect(root.flow == "{z: 1, a: 2, m: [c, b, a], k: {y: 1, x: 2}}")
    }

    @Test("scalar styles are kept and block scalars are folded as YAML says")
    func scalarStyles() throws {
        let root = try #require(try YAML.load("p: plain\ns: 'it''s'\nd: \"tab\\there\"\nl: |\n  one\n  two\nf: >\n  one\n  two\n"))
        #expect(root["p"]?.style == .plain)
        #expect(root["s"]?.style == .singleQuoted)
        #expect(root["s"]?.scalar == "it's")
        #expect(root["d"]?.style == .doubleQuoted)
        #expect(root["d"]?.scalar == "tab\there")
        #expect(root["l"]?.style == .literal)
        #expect(root["l"]?.scalar == "one\ntwo\n")
        #expect(root["f"]?.style == .folded)
        #expect(root["f"]?.scalar == "one two\n")
    }

    @Test("a NUL written as an escape stays inside the value")
    func escapedNul() throws {
        let root = try #require(try YAML.load("a: \"x\\0y\"\n"))
        #expect(root["a"]?.scalar == "x\u{0}y")
    }

    @Test("null is an untagged plain ~, null, Null, NULL or nothing", arguments: [
        ("a: ~", true), ("a: null", true), ("a: Null", true), ("a: NULL", true), ("a:", true), ("a: !!null x", true),
        ("a: 'null'", false), ("a: \"~\"", false), ("a: ''", false), ("a: nULL", false), ("a: !!str null", false),
        ("a: []", false), ("a: 0", false),
    ])
    func isNull(text: String, expected: Bool) throws {
        let root = try #require(try YAML.load(text))
        #expect(root["a"]?.isNull == expected)
    }

    @Test("kind names read well in error messages", arguments: [
        ("a: x", "a string"), ("a: '~'", "a string"), ("a: ~", "null"), ("a: [x]", "a list"), ("a: {x: 1}", "a mapping"),
    ])
    func kindName(text: String, expected: String) throws {
        let root = try #require(try YAML.load(text))
        #expect(root["a"]?.kindName == expected)
    }

    @Test("accessors return only the matching kind")
    func accessors() throws {
        let root = try #require(try YAML.load("s: x\nq: [x]\nm: {x: 1}\n"))
        #expect(root["s"]?.scalar == "x" && root["s"]?.sequence == nil && root["s"]?.mapping == nil)
        #expect(root["q"]?.scalar == nil && root["q"]?.sequence?.count == 1 && root["q"]?.style == nil)
        #expect(root["m"]?.scalar == nil && root["m"]?.sequence == nil && root["m"]?.mapping?.count == 1)
    }

    @Test("explicit tags are resolved to their full form; untagged nodes have none")
    func tags() throws {
        let root = try #require(try YAML.load("a: !!str 1\nb: !local x\nc: !!map {}\nd: 1\n"))
        #expect(root["a"]?.tag == "tag:yaml.org,2002:str")
        #expect(root["b"]?.tag == "!local")
        #expect(root["c"]?.tag == "tag:yaml.org,2002:map")
        #expect(root["d"]?.tag == nil)
        #expect(root.tag == nil)
    }

    @Test("input without a document is nil", arguments: ["", "\n\n", "# only\n# comments\n", "   \n"])
    func emptyInput(text: String) throws {
        #expect(try YAML.load(text) == nil)
        #expect(try YAML.loadAll(text).isEmpty)
    }

    @Test("an explicit empty document is one null node")
    func emptyDocument() throws {
        let root = try #require(try YAML.load("---\n"))
        #expect(root.isNull)
    }

    @Test("explicit document markers around one document load")
    func explicitMarkers() throws {
        let root = try #require(try YAML.load("%YAML 1.1\n---\na: 1\n...\n"))
        #expect(root.flow == "{a: 1}")
        #expect(root.mark == Mark(line: 3, column: 1))
    }

    @Test("loadAll returns every document in order")
    func multipleDocuments() throws {
        let documents = try YAML.loadAll("a: 1\n---\nb: 2\n--- [3]\n")
        #expect(documents.map(\.flow) == ["{a: 1}", "{b: 2}", "[3]"])
        #expect(documents.map(\.mark) == [Mark(line: 1, column: 1), Mark(line: 3, column: 1), Mark(line: 4, column: 5)])
    }

    @Test("load refuses a second document, located at its start")
    func loadRefusesSecondDocument() {
        let error = #expect(throws: YAMLError.self) { try YAML.load("a: 1\n---\nb: 2\n") }
        #expect(error?.mark == Mark(line: 2, column: 1))
        #expect(error?.message.contains("policy files hold one document") == true)
    }

    @Test("marks order by line, then column")
    func markOrder() {
        #expect(Mark(line: 1, column: 9) < Mark(line: 2, column: 1))
        #expect(Mark(line: 2, column: 1) < Mark(line: 2, column: 2))
        #expect(!(Mark(line: 2, column: 2) < Mark(line: 2, column: 2)))
        #expect(Mark(line: 14, column: 7).description == "14:7")
    }

    @Test("an error describes itself as LINE:COL: message, with libyaml's context after it")
    func errorDescription() {
        #expect(YAMLError(mark: Mark(line: 3, column: 5), message: "duplicate key 'x'").description == "3:5: duplicate key 'x'")
        let error = loadError("a: [1, 2\n")
        #expect(error?.description == "2:1: did not find expected ',' or ']' (while parsing a flow sequence at 1:4)")
    }
}
