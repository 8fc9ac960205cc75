// A custom rule's rename meets apply's no-replace rule like a built-in rename: a taken name is skipped.
// Trees under /tmp only; nothing outside them is touched.
import Testing
import StoragePolicy
import TreeFixture

@Suite("Library: custom rule renames") struct CustomRenameTests {
    @Test("a custom rename onto an existing name is skipped, never replacing it") func noReplace() throws {
        let tree = try Tree { Dir("d") { File("a.txt", size: 1); File("b.txt", size: 2) } }
        defer { tree.remove() }
        let policy = try Policy("custom") {
            Rule.custom("a-to-b", in: "d", summary: "Renames a.txt to b.txt.") { entry in
                entry.name.escaped == "a.txt" ? [.rename(to: FileName("b.txt")!, reason: "test")] : []
            }
        }
        let engine = StorageEngine(policy: policy, root: tree.root, planOptions: tree.options())
        let result = try engine.apply()
        let sizes = Manifest.take(tree.root).filter { $0.type == 0o100000 && $0.path.first == UInt8(ascii: "d") }
            .map { "\(String(decoding: $0.path, as: UTF8.self)) \($0.size)" }
        #expect(sizes == ["d/a.txt 1", "d/b.txt 2"])
        #expect(result.report.items.map(\.outcome) == [.skipped("d/b.txt already exists; nothing replaced")])
        #expect(result.counts.isEmpty)
    }

    @Test("a custom rename to a name longer than NAME_MAX is a violation with the byte count, never an action") func overlong() throws {
        let tree = try Tree { Dir("d") { File("a.txt", size: 1) } }
        defer { tree.remove() }
        let long = String(repeating: "n", count: 300)
        let policy = try Policy("custom") {
            Rule.custom("long", in: "d", summary: "Renames to a long name.") { _ in [.rename(to: FileName(long)!, reason: "test")] }
        }
        let plan = try StorageEngine(policy: policy, root: tree.root, planOptions: tree.options()).plan()
        #expect(plan.actions.isEmpty)
        #expect(plan.violations.map(\.message) == ["test, but the new name would be 300 bytes, more than the 255 a file name may have (NAME_MAX); not renamed"])
    }
}
