// expire `keep: N` on generated trees: exactly N newest per directory stay, expired or not; directories count
// as entries; only what the rule selects is counted. Every expected plan is written out by hand.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
import TreeFixture

@Suite("expire keep: N") struct KeepNewestTests {
    static func keep(_ n: Int, after: PolicyDuration = .days(1), by: Expire.Timestamp = .mtime) -> Rule.Kind {
        .expire(Expire(after: after, by: by, keep: n))
    }

    @Test("in each directory exactly the N newest selected entries stay, expired or not")
    func exactlyN() throws {
        let tree = try Tree {
            Dir("exports") {
                File("a", age: .days(2)); File("b", age: .days(3)); File("c", age: .days(4))
                File("d", age: .days(5)); File("e", age: .days(6))
                Dir("sub") {
                    File("x", age: .days(2)); File("y", age: .days(9)); File("z", age: .days(3)); File("w", age: .days(4))
                }
            }
        }
        defer { tree.remove() }
        // exports: sub (mtime ~now, as files were created in it) is the newest of 6 entries, then a and b.
        let p = try plan(tree, [rule("exports", "exports", Self.keep(3))])
        #expect(p.lines == ["delete exports/c", "delete exports/d", "delete exports/e", "delete exports/sub/y"])
    }

    @Test("keep: 0 is plain expiry; keep at or above the number of entries keeps them all")
    func boundaries() throws {
        let tree = try Tree {
            Dir("t") { File("a", age: .days(2)); File("b", age: .days(3)); File("c", age: .days(4)) }
        }
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "t", Self.keep(0))]).lines == ["delete t/a", "delete t/b", "delete t/c"])
        #expect(try plan(tree, [rule("r", "t", Self.keep(2))]).lines == ["delete t/c"])
        #expect(try plan(tree, [rule("r", "t", Self.keep(3))]).lines == [])
        #expect(try plan(tree, [rule("r", "t", Self.keep(4))]).lines == [])
    }

    @Test("only entries the rule selects count toward N; fresh ones are among the kept")
    func selectedOnly() throws {
        let tree = try Tree {
            Dir("t") {
                File("new.log", age: .hours(1))
                File("a.log", age: .days(2)); File("b.log", age: .days(3))
                File("newer.txt", age: .minutes(1)); File("old.txt", age: .days(9))
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "t", Self.keep(2), match: ["*.log"])])
        #expect(p.lines == ["delete t/b.log"])
    }

    @Test("an expired directory among the N newest is kept whole; ties break by name")
    func directoriesAndTies() throws {
        let tree = try Tree {
            Dir("t") {
                Dir("d", age: .days(2))
                File("a", age: .days(3)); File("b", age: .days(3)); File("c", age: .days(5))
            }
        }
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "t", Self.keep(2))]).lines == ["delete t/b", "delete t/c"])
        #expect(try plan(tree, [rule("r", "t", Self.keep(1))]).lines == ["delete t/a", "delete t/b", "delete t/c"])
        #expect(try plan(tree, [rule("r", "t", Self.keep(0))]).lines == ["delete t/a", "delete t/b", "delete t/c", "delete t/d"])
    }

    @Test("the loader reads keep; a negative or fractional keep is an error at its column")
    func loader() throws {
        let yaml = "version: 1\nname: k\nrules:\n  - name: r\n    path: t\n    expire: { after: 1d, keep: 3 }\n"
        #expect(try PolicyLoader.load(yaml: yaml).policy.rules[0].kind == Self.keep(3))
        for bad in ["-1", "2.5", "three"] {
            do {
                _ = try PolicyLoader.load(yaml: yaml.replacingOccurrences(of: "keep: 3", with: "keep: \(bad)"), file: "p.yaml")
                Issue.record("keep: \(bad) loaded")
            } catch {
                #expect(error.diagnostics.map(\.description) == ["p.yaml:6:32: error: rule 'r': 'expire': 'keep': invalid count '\(bad)' (expected a whole number such as 3)"])
            }
        }
    }
}
