// Tests of what the reader adds to libyaml: duplicate and merge keys, aliases, alias bombs, depth limits.
// Never relies on libyaml for these: each input here is valid YAML syntax that the reader itself must judge.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("YAML reader: keys, aliases and limits")
struct YAMLStructureTests {
    // MARK: Keys

    @Test("a repeated key is an error at the second key, naming the first", arguments: [
        ("a: 1\nb: 2\na: 3\n", Mark(line: 3, column: 1), "duplicate key 'a' (first at 1:1)"),
        ("rules:\n  - name: x\n    path: p\n    name: y\n", Mark(line: 4, column: 5), "duplicate key 'name' (first at 2:5)"),
        ("{after: 1h, by: mtime, after: 2h}", Mark(line: 1, column: 24), "duplicate key 'after' (first at 1:2)"),
        ("a: 1\n'a': 2\n", Mark(line: 2, column: 1), "duplicate key 'a' (first at 1:1)"),
        ("\"a\": 1\n? a\n: 2\n", Mark(line: 2, column: 3), "duplicate key 'a' (first at 1:1)"),
    ])
    func duplicateKey(text: String, mark: Mark, message: String) {
        let error = loadError(text)
        #expect(error?.mark == mark)
        #expect(error?.message == message)
    }

    @Test("a long or multi-line duplicate key is cut short in the message")
    func longDuplicateKey() {
        let key = String(repeating: "k", count: 500)
        let error = loadError("\"\(key)\\n\": 1\n\"\(key)\\n\": 2\n")
        #expect(error?.message == "duplicate key '\(String(repeating: "k", count: 60))...' (first at 1:1)")
        #expect(loadError("\"a\\nb\": 1\n\"a\\nb\": 2\n")?.message == "duplicate key 'a\\nb' (first at 1:1)")
    }

    @Test("the same key in different mappings, or differently tagged, is no duplicate")
    func sameKeyElsewhere() throws {
        let root = try #require(try YAML.load("a: {x: 1}\nb: {x: 2}\nc: [{x: 1}, {x: 2}]\nd: {!!str x: 1, x: 2}\n"))
        #expect(root.flow == "{a: {x: 1}, b: {x: 2}, c: [{x: 1}, {x: 2}], d: {<tag:yaml.org,2002:str> x: 1, x: 2}}")
    }

    @Test("merge keys are refused with a clear message")
    func mergeKey() {
        let error = loadError("base: &b {a: 1}\nrule:\n  <<: *b\n  c: 2\n")
        #expect(error?.mark == Mark(line: 3, column: 3))
        #expect(error?.message == "merge keys ('<<') are not supported: write the keys out in full")
    }

    @Test("a quoted '<<' is an ordinary key")
    func quotedMergeKey() throws {
        #expect(try YAML.load("'<<': x\n")?.flow == "{'<<': x}")
    }

    // MARK: Aliases

    @Test("aliases resolve to their anchor's node, marked where the alias stands")
    func aliasesResolve() throws {
        let root = try #require(try YAML.load("base: &b\n  after: 24h\n  by: mtime\nrule: *b\nname: &n tmp\nagain: *n\n"))
        #expect(root.flow == "{base: {after: 24h, by: mtime}, rule: {after: 24h, by: mtime}, name: tmp, again: tmp}")
        #expect(root["rule"]?.mark == Mark(line: 4, column: 7))
        #expect(root["again"]?.mark == Mark(line: 6, column: 8))
        // What lies inside is shared with the anchor, so it keeps the anchor's marks.
        #expect(root["rule"]?["after"]?.mark == Mark(line: 2, column: 10))
    }

    @Test("a redefined anchor applies from its new definition on")
    func redefinedAnchor() throws {
        #expect(try YAML.load("- &a 1\n- *a\n- &a 2\n- *a\n")?.flow == "[1, 1, 2, 2]")
    }

    @Test("an alias with no anchor before it is an error at the alias")
    func unknownAlias() {
        let error = loadError("a: 1\nb: *nowhere\n")
        #expect(error?.mark == Mark(line: 2, column: 4))
        #expect(error?.message == "unknown alias '*nowhere': no anchor '&nowhere' before it in this document")
    }

    @Test("anchors do not reach into the next document")
    func anchorsScopedToDocument() {
        let error = loadError("a: &x 1\n---\nb: *x\n")
        #expect(error?.mark == Mark(line: 3, column: 4))
    }

    @Test("an alias inside its own anchor's node is refused, not looped over")
    func recursiveAlias() {
        let error = loadError("a: &loop\n  b: *loop\n")
        #expect(error?.mark == Mark(line: 2, column: 6))
        #expect(error?.message.contains("refers to a node that contains it") == true)
    }

    static func billionLaughs(levels: Int) -> String {
        var lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        let names = (0...levels).map { String(UnicodeScalar(UInt8(97 + $0))) }
        for (previous, name) in zip(names, names.dropFirst()) {
            lines.append("\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]")
        }
        return lines.joined(separator: "\n")
    }

    @Test("an alias bomb is refused before it expands")
    func aliasBomb() {
        // Nine levels would expand to 9^9 (387 million) nodes; the limit stops it at the level crossing 100,000.
        let error = loadError(Self.billionLaughs(levels: 9))
        #expect(error?.mark == Mark(line: 6, column: 8))
        #expect(error?.message == "alias expansion exceeds 100000 nodes at alias '*e'; refusing a possible alias bomb")
    }

    @Test("aliases within the expansion limit load, and the limit is adjustable")
    func aliasesWithinLimit() throws {
        let text = Self.billionLaughs(levels: 3)  // 9*10 + 9*91 + 9*820 = 8,289 nodes through aliases
        let root = try #require(try YAML.load(text))
        #expect(root["d"]?.allNodes.count == 7_381)
        #expect(loadError(text, limits: YAML.Limits(maxAliasExpansion: 8_000))?.mark == Mark(line: 4, column: 40))  // the ninth *c
    }

    // MARK: Depth

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test("nesting up to the limit loads")
    func depthAtLimit() throws {
        let root = try #require(try YAML.load(Self.nested(512)))
        #expect(root.allNodes.count == 512)
    }

    @Test("nesting past the limit is an error at the collection that crosses it")
    func depthPastLimit() {
        let error = loadError(Self.nested(513))
        #expect(error?.mark == Mark(line: 1, column: 513))
        #expect(error?.message == "nesting exceeds 512 levels")
    }

    @Test("a hundred thousand open brackets fail fast instead of exhausting the stack")
    func hugeDepth() {
        #expect(loadError(String(repeating: "[", count: 100_000))?.mark == Mark(line: 1, column: 513))
        #expect(loadError(String(repeating: "- ", count: 100_000))?.mark == Mark(line: 1, column: 1025))
    }

    @Test("block nesting counts the same way", arguments: [4, 5])
    func blockDepth(depth: Int) {
        let text = (0..<depth).map { String(repeating: "  ", count: $0) + "k\($0):" }.joined(separator: "\n") + " leaf\n"
        let result = Result { () throws(YAMLError) in try YAML.load(text, limits: YAML.Limits(maxDepth: 4)) }
        if depth <= 4 {
            #expect((try? result.get()) != nil)
        } else {
            #expect(throws: YAMLError(mark: Mark(line: 5, column: 9), message: "nesting exceeds 4 levels")) { try result.get() }
        }
    }

    @Test("an alias cannot stack nesting past the limit")
    func depthThroughAlias() {
        let text = "a: &deep [[[x]]]\nb: [[*deep]]\n"
        #expect((try? YAML.load(text, limits: YAML.Limits(maxDepth: 6))) != nil)
        let error = loadError(text, limits: YAML.Limits(maxDepth: 5))
        #expect(error?.mark == Mark(line: 2, column: 6))
        #expect(error?.message == "nesting exceeds 5 levels through alias '*deep'")
    }
}
