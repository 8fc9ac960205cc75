// expire `unit: directory` on generated trees: each direct child folder of the scope goes whole when the
// newest thing inside it is expired, and stays whole otherwise; files in the scope are units of their own.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("expire unit: directory") struct DirectoryUnitTests {
    static func units(_ after: PolicyDuration, by: Expire.Timestamp = .mtime) -> Rule.Kind {
        .expire(Expire(after: after, by: by, unit: .directory))
    }

    @Test("a folder whose newest entry is expired goes whole; one fresh file anywhere inside keeps it all")
    func wholeUnits() throws {
        let tree = try Tree {
            Dir("builds") {
                Dir("old", age: .days(9)) {
                    File("a", age: .days(9))
                    Dir("deep", age: .days(9)) { File("b", age: .days(8)) }
                }
                Dir("mixed", age: .days(9)) {
                    File("a", age: .days(9))
                    Dir("deep", age: .days(9)) { File("fresh", age: .hours(1)) }
                }
                File("loose-old", age: .days(9))
                File("loose-new", age: .hours(1))
            }
        }
        defer { tree.remove() }
        // Every folder's own mtime is reset by the tree builder after its files: set ages above hold.
        let p = try plan(tree, [rule("builds", "builds", Self.units(.days(7)))])
        #expect(p.lines == ["delete builds/loose-old", "delete builds/old"])
        let old = try #require(p.actions.first { $0.path == path("builds/old") })
        #expect(old.entries == 4)
        #expect(old.reason == "unit: directory, newest inside mtime 8d ago > 7d")
    }

    @Test("a unit exactly `after` old stays; one second older goes")
    func boundary() throws {
        let tree = try Tree {
            Dir("s") {
                Dir("exact", age: .days(7)) { File("f", age: .days(7)) }
                Dir("over", age: .seconds(7 * 86400 + 1)) { File("f", age: .seconds(7 * 86400 + 1)) }
            }
        }
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7)))]).lines == ["delete s/over"])
    }

    @Test("other rules' deletions inside a unit that goes are covered by it; inside a unit that stays they happen")
    func heldInside() throws {
        let tree = try Tree {
            Dir("s") {
                Dir("gone", age: .days(9)) { File("x.tmp", age: .days(9)) }
                Dir("kept", age: .days(9)) { File("x.tmp", age: .days(9)); File("new", age: .hours(1)) }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("units", "s", Self.units(.days(7))),
                                rule("tmp", "s", expire(.days(1)), match: ["**/*.tmp"])])
        #expect(p.lines == ["delete s/gone", "delete s/kept/x.tmp"])
    }

    @Test("a unit holding a layout directory is structure, never deleted whole")
    func structureIsNoUnit() throws {
        let tree = try Tree {
            Dir("s") { Dir("keep", age: .days(9)) { Dir("layout", age: .days(9)) } }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "s", Self.units(.days(7)))], layout: [LayoutEntry(path: path("s/keep/layout"))])
        #expect(p.lines == [])
    }

    @Test("audit reports a unit that would go, with its entries")
    func audit() throws {
        let tree = try Tree {
            Dir("s") { Dir("u", age: .days(9)) { File("f", age: .days(9)) } }
        }
        defer { tree.remove() }
        var r = rule("r", "s", Self.units(.days(7)))
        r.mode = .audit
        let p = try plan(tree, [r])
        #expect(p.lines == [])
        #expect(p.violations.map(\.message) == ["unit: directory, newest inside mtime 9d ago > 7d: would be deleted with its 1 entries"])
    }
}

@Suite("expire unit: directory, saved plans") struct DirectoryUnitValidationTests {
    @Test("the planner's unit deletes pass plan validation; a forged delete inside a unit is refused")
    func validation() throws {
        let tree = try Tree {
            Dir("s") { Dir("u", age: .days(9)) { Dir("v", age: .days(9)) { File("f", age: .days(9)) } } }
        }
        defer { tree.remove() }
        let policy = Policy(name: "units", rules: [rule("r", "s", DirectoryUnitTests.units(.days(7)))])
        let p = try Planner(policy: policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(p.lines == ["delete s/u"])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
        var forged = p
        forged.actions = [Action(kind: .delete, path: path("s/u/v"), rule: "r", reason: "forged",
                                 identity: p.actions[0].identity, type: .directory, entries: 2)]
        let refusal = PlanValidation(policy: policy).firstInvalid(in: forged)
        #expect(refusal?.description.contains("rule 'r' has unit: directory: it deletes only direct children of its scope s") == true)
    }
}

@Suite("expire unit: directory with keep") struct DirectoryUnitKeepTests {
    static func units(_ after: PolicyDuration, keep: Int) -> Rule.Kind {
        .expire(Expire(after: after, keep: keep, unit: .directory))
    }

    /// Units by age of their newest entry: u1 (1d), f2 (a file, 9d), u3 (10d, deep), u4 (11d); all but u1 expired.
    static func tree() throws -> Tree {
        try Tree {
            Dir("s") {
                Dir("u1", age: .days(20)) { File("f", age: .days(1)) }
                File("f2", age: .days(9))
                Dir("u3", age: .days(20)) { Dir("d", age: .days(20)) { File("f", age: .days(10)) } }
                Dir("u4", age: .days(11)) { File("f", age: .days(11)); File("x.tmp", age: .days(11)) }
            }
        }
    }

    @Test("exactly the N newest units stay, expired or not; files in the scope count as units")
    func exactlyN() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 0))]).lines == ["delete s/f2", "delete s/u3", "delete s/u4"])
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 1))]).lines == ["delete s/f2", "delete s/u3", "delete s/u4"])
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 2))]).lines == ["delete s/u3", "delete s/u4"])
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 3))]).lines == ["delete s/u4"])
        let p = try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 3))])
        #expect(p.actions.first?.entries == 3)
        #expect(p.actions.first?.reason == "unit: directory, newest inside mtime 11d ago > 7d")
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 4))]).lines == [])
    }

    @Test("ties break by name: of two units with the same date, the first name stays")
    func ties() throws {
        let tree = try Tree {
            Dir("s") {
                Dir("b", age: .days(9)) { File("f", age: .days(9)) }
                Dir("a", age: .days(9)) { File("f", age: .days(9)) }
            }
        }
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 1))]).lines == ["delete s/b"])
    }

    @Test("other rules' deletions inside a kept unit happen; inside a unit that goes they are covered")
    func heldInside() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let tmp = rule("tmp", "s", expire(.days(1)), match: ["**/*.tmp"])
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 4)), tmp]).lines == ["delete s/u4/x.tmp"])
        #expect(try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 3)), tmp]).lines == ["delete s/u4"])
    }

    @Test("audit reports the units beyond the N newest that are expired")
    func audit() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "s", Self.units(.days(7), keep: 2), mode: .audit)])
        #expect(p.lines == [])
        #expect(p.findings.sorted() == ["r: s/u3: unit: directory, newest inside mtime 10d ago > 7d: would be deleted with its 2 entries",
                                        "r: s/u4: unit: directory, newest inside mtime 11d ago > 7d: would be deleted with its 2 entries"])
    }

    @Test("the loader accepts keep with unit: directory, and the planner's deletes pass plan validation")
    func loaderAndValidation() throws {
        let yaml = "version: 1\nname: k\nrules:\n  - name: r\n    path: s\n    expire: { after: 7d, keep: 2, unit: directory }\n"
        let policy = try PolicyLoader.load(yaml: yaml).policy
        #expect(policy.rules[0].kind == Self.units(.days(7), keep: 2))
        let tree = try Self.tree()
        defer { tree.remove() }
        let p = try Planner(policy: policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(p.lines == ["delete s/u3", "delete s/u4"])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
    }
}
