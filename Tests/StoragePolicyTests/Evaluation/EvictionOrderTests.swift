// Eviction order and counts on quota and trash (`order`, `first`, `maxEntries`), and the trash maxSize fix: one
// item over the cap goes alone, not the whole trash. Expected evictions worked out here by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Eviction order and counts") struct EvictionOrderTests {
    /// old.bin (5 days, 40 kB), mid.part (3 days, 10 kB), new.bin (1 day, 20 kB), newest.part (0.5 days, 10 kB).
    static func cache() throws -> Tree {
        try Tree {
            Dir("cache") {
                File("old.bin", age: .days(5), atime: .days(1), size: 40_000)
                File("mid.part", age: .days(3), atime: .days(4), size: 10_000)
                File("new.bin", age: .days(1), atime: .days(6), size: 20_000)
                File("newest.part", age: .hours(12), atime: .days(2), size: 10_000)
            }
        }
    }

    static let names = ["old.bin", "mid.part", "new.bin", "newest.part"]
    static func total(_ tree: Tree) -> Int64 { names.reduce(Int64(0)) { $0 + allocated(tree, "cache/\($1)") } }

    static func quota(_ max: Int64, _ choice: EvictionChoice, keep: Int = 0, mode: Rule.Mode = .enforce) -> Rule {
        var q = Quota(max: ByteSize(bytes: max), keep: keep)
        q.eviction = choice
        if choice.order == .newestLastAccess { q.evict = .lru }
        return rule("q", "cache", .quota(q), mode: mode)
    }

    @Test("order: largest takes the biggest file first; oldest stays the default")
    func largest() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let over = Self.total(tree) - 1
        let p = try plan(tree, [Self.quota(over, EvictionChoice(order: .largest))])
        #expect(p.lines == ["delete cache/old.bin"])
        // Just over by more than old.bin: the next largest (new.bin) goes too, not the older mid.part.
        let more = Self.total(tree) - allocated(tree, "cache/old.bin") - 1
        #expect(try plan(tree, [Self.quota(more, EvictionChoice(order: .largest))]).lines == ["delete cache/new.bin", "delete cache/old.bin"])
        #expect(p.actions[0].reason.hasSuffix("; largest first"))
    }

    @Test("order: newest-last-access takes the least recently accessed first")
    func lastAccess() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let p = try plan(tree, [Self.quota(Self.total(tree) - 1, EvictionChoice(order: .newestLastAccess))])
        #expect(p.lines == ["delete cache/new.bin"])  // accessed 6 days ago
    }

    @Test("first: matching files go before every other, in order among themselves; keep still protects the newest")
    func first() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let total = Self.total(tree)
        let choice = EvictionChoice(first: globs(["*.part"]))
        // Over by one byte: the oldest .part, not old.bin.
        let p = try plan(tree, [Self.quota(total - 1, choice)])
        #expect(p.lines == ["delete cache/mid.part"])
        #expect(p.actions[0].reason.hasSuffix("; matching first: [\"*.part\"] first, then oldest (mtime)"))
        // keep: 1 protects newest.part (the newest file) even though it matches first:.
        let both = total - allocated(tree, "cache/mid.part") - 1
        #expect(try plan(tree, [Self.quota(both, choice)]).lines == ["delete cache/mid.part", "delete cache/newest.part"])
        #expect(try plan(tree, [Self.quota(both, choice, keep: 1)]).lines == ["delete cache/mid.part", "delete cache/old.bin"])
    }

    @Test("maxEntries evicts down to that many files, oldest first, even under the byte limit")
    func maxEntries() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let roomy = Self.total(tree) * 10
        #expect(try plan(tree, [Self.quota(roomy, EvictionChoice(maxEntries: 4))]).lines.isEmpty)
        let p = try plan(tree, [Self.quota(roomy, EvictionChoice(maxEntries: 2))])
        #expect(p.lines == ["delete cache/mid.part", "delete cache/old.bin"])
        #expect(p.actions[0].reason == "quota: 4 files > maxEntries 2; oldest (mtime) first")
        // Audit says the same without deleting.
        let audit = try plan(tree, [Self.quota(roomy, EvictionChoice(maxEntries: 3), mode: .audit)])
        #expect(audit.lines.isEmpty)
        #expect(audit.findings.count == 1)
        #expect(audit.findings[0].contains("would evict 1 files"))
        // A saved plan of these evictions is one the policy makes.
        let policy = Policy(name: "test", rules: [Self.quota(roomy, EvictionChoice(maxEntries: 2))])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
    }

    @Test("the new keys load, refuse nonsense at their line and column, and print in validate --effective")
    func language() throws {
        let header = "version: 1\nname: t\nrules:\n  - name: q\n    path: cache\n"
        let yaml = header + "    quota: { max: 1MiB, order: largest, first: ['*.part'], maxEntries: 100 }\n"
        let loaded = try PolicyLoader.load(yaml: yaml, file: "p.yaml").policy
        guard case .quota(let q) = loaded.rules[0].kind else { Issue.record("not a quota"); return }
        #expect(q.eviction == EvictionChoice(order: .largest, first: globs(["*.part"]), maxEntries: 100))
        let effective = loaded.rules[0].kind.syntax.effectiveYAML
        #expect(effective == "quota: { max: 1048576, target: 100%, order: largest, first: [\"*.part\"], maxEntries: 100 }")
        // Round trip: the effective line loads back to the same quota.
        let again = try PolicyLoader.load(yaml: header + "    " + effective + "\n", file: "p.yaml").policy
        #expect(again.rules[0].kind == loaded.rules[0].kind)
        #expect(PolicyLoaderTests.errors(header + "    quota: { max: 1MiB, order: biggest }\n")
            == ["6:32: rule 'q': 'quota': 'order': invalid value 'biggest' (expected one of: oldest, largest, newest-last-access)"])
        #expect(PolicyLoaderTests.errors(header + "    quota: { max: 1MiB, maxEntries: 0 }\n")
            == ["6:37: rule 'q': 'quota': 'maxEntries' must be at least 1 (leave it out for no count limit)"])
        #expect(PolicyLoaderTests.errors(header + "    quota: { max: 1MiB, evict: lru, order: oldest }\n")
            == ["6:32: rule 'q': 'quota': give 'order' or 'evict', not both (order: newest-last-access is evict: lru; drop 'evict')"])
        let trash = header + "    trash: { retain: 30d, maxSize: 1GiB, order: newest-last-access, maxEntries: 9 }\n"
        #expect(try PolicyLoader.load(yaml: trash, file: "p.yaml").policy.rules[0].kind.syntax.effectiveYAML == "trash: { retain: 4w2d, layout: auto, maxSize: 1073741824, order: newest-last-access, maxEntries: 9 }")
    }

    // MARK: trash

    static func trash(_ now: Int64, big: Int) throws -> Tree {
        try Tree(now: now) {
            Dir("Trash") {
                Dir("files") { File("a", size: 10_000); File("b", size: 10_000); File("big", size: big); File("c.part", size: 10_000) }
                Dir("info") {
                    File("a.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(5))))
                    File("b.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(4))))
                    File("big.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(1))))
                    File("c.part.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(2))))
                }
            }
        }
    }

    static func trashRule(_ maxSize: Int64?, _ choice: EvictionChoice = EvictionChoice()) -> Rule {
        var r = TrashRetention(retain: .days(30), layout: .freedesktop, maxSize: maxSize.map { ByteSize(bytes: $0) })
        r.eviction = choice
        return rule("t", "Trash", .trash(r))
    }

    @Test("one item over maxSize on its own is deleted alone, not the older items with it")
    func oneItemOverTheCap() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.trash(now, big: 200_000)
        defer { tree.remove() }
        let cap = allocated(tree, "Trash/files/big") - 1
        let p = try plan(tree, [Self.trashRule(cap)], now: now)
        #expect(p.lines == ["delete Trash/files/big", "delete Trash/info/big.trashinfo"])
        let big = try #require(p.actions.first { $0.path == path("Trash/files/big") })
        #expect(big.reason.contains("; larger than maxSize on its own, so it goes first (trashed (DeletionDate) 1d"))
    }

    @Test("trash maxEntries, order: largest and first: choose which items go")
    func trashOrderAndCount() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.trash(now, big: 30_000)
        defer { tree.remove() }
        // Four items, at most two: the two trashed longest ago.
        #expect(try plan(tree, [Self.trashRule(nil, EvictionChoice(maxEntries: 2))], now: now).lines
            == ["delete Trash/files/a", "delete Trash/files/b", "delete Trash/info/a.trashinfo", "delete Trash/info/b.trashinfo"])
        // One item too many: the largest goes under order: largest, the .part under first:.
        #expect(try plan(tree, [Self.trashRule(nil, EvictionChoice(order: .largest, maxEntries: 3))], now: now).lines
            == ["delete Trash/files/big", "delete Trash/info/big.trashinfo"])
        #expect(try plan(tree, [Self.trashRule(nil, EvictionChoice(first: globs(["*.part"]), maxEntries: 3))], now: now).lines
            == ["delete Trash/files/c.part", "delete Trash/info/c.part.trashinfo"])
    }
}
