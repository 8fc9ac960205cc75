// The DSL's layout keys: what YAML's long form says, a Swift policy says with modifiers, and the two give the same
// Policy; the same checks refuse the same mistakes.
import Testing
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("Policy DSL: layout keys") struct LayoutDSLTests {
    @Test("mode, owner, group, fix, type, target and content in Swift equal the same layout loaded from YAML")
    func sameAsYAML() throws {
        let built = try Policy("layout") {
            LayoutDirectory("spool/in").mode("0750").owner(12345).group("root").fix()
            LayoutDirectory("cache", excludeFromBackup: true, cacheTag: true).mode("700")
            LayoutFile("spool/README", content: "Drop files here.\n").mode("0644").owner("root").fix()
            LayoutFile("empty")
            LayoutSymlink("current", target: "releases/3")
        }
        let yaml = """
        version: 1
        name: layout
        layout:
          - { path: spool/in, mode: "0750", owner: 12345, group: root, fix: true }
          - { path: cache, backup: exclude, cacheTag: true, mode: "700" }
          - { path: spool/README, type: file, content: "Drop files here.\\n", mode: "0644", owner: root, fix: true }
          - { path: empty, type: file }
          - { path: current, type: symlink, target: releases/3 }
        rules: []
        """
        let loaded = try PolicyLoader.load(yaml: yaml).policy
        #expect(PolicyBuilderTests.normalized(built) == PolicyBuilderTests.normalized(loaded))
        #expect(built.layout.map(\.type) == [.directory, .directory, .file, .file, .symlink])
        #expect(built.layout[0].mode == 0o750 && built.layout[0].owner == PrincipalFilter(id: 12345)
            && built.layout[0].group == PrincipalFilter(id: 0, name: "root") && built.layout[0].fix)
        #expect(built.layout[2].content == Array("Drop files here.\n".utf8))
        #expect(built.layout[4].target == Array("releases/3".utf8))
    }

    @Test("an invalid mode, an unknown user, an empty target or too much content throw, naming the entry")
    func invalid() {
        do {
            _ = try Policy("layout") {
                LayoutDirectory("a").mode("0750x")
                LayoutFile("b").owner("no-such-user-policyctl")
                LayoutSymlink("c", target: "")
                LayoutFile("d", content: String(repeating: "x", count: LayoutEntry.contentLimit + 1))
            }
            Issue.record("expected the policy to be refused")
        } catch {
            let messages = error.diagnostics.map(\.message)
            #expect(messages == [
                "layout entry 'a': invalid mode '0750x' (expected 3 or 4 octal digits, e.g. \"0750\")",
                "layout entry 'b': no user named 'no-such-user-policyctl' on this system",
                "layout entry 'c': a symlink's target must be 1 to 4095 bytes with no NUL",
                "layout entry 'd': 'content' is \(LayoutEntry.contentLimit + 1) bytes; a layout file holds at most \(LayoutEntry.contentLimit)",
            ], "\(messages)")
        }
    }
}
