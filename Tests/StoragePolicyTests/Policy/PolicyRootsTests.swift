// `roots:` and `trash: { discover: true }` in the model: decoding, the one-root policies each root becomes (rules,
// pressure), discovering rules kept out of `rules`, the state folder names, `~/` expansion, inheritance.
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("roots: and trash discover in the model") struct PolicyRootsTests {
    static let policy = """
        version: 1
        name: host
        rules:
          - { name: tmp-expiry, path: ., expire: 10d, regenerable: true }
          - { name: residue, path: ., forbid: ["*.part"] }
          - { name: bins, trash: { retain: 30d, discover: true } }
        pressure:
          - { name: low, freeBelow: 10%, freeUntil: 15%, evict: [tmp-expiry] }
        roots:
          - { path: /tmp, rules: [tmp-expiry] }
          - { path: /var/tmp, rules: [residue] }
          - { path: ~/.cache, rules: tmp-expiry }

        """

    @Test("the list decodes; each root's policy has its rules only, and pressure through those it has")
    func oneRootPolicies() throws {
        let policy = try PolicyLoader.load(yaml: Self.policy, file: "p.yaml").policy
        #expect(policy.roots.map(\.path) == ["/tmp", "/var/tmp", "~/.cache"])
        #expect(policy.roots.map(\.rules) == [["tmp-expiry"], ["residue"], ["tmp-expiry"]])
        #expect(policy.roots[1].location == PolicyLocation(file: "p.yaml", line: 11, column: 13))
        #expect(policy.rules.map(\.name) == ["tmp-expiry", "residue"], "the discovering rule is kept out of rules")
        #expect(policy.discoveringTrash.map(\.name) == ["bins"])
        let tmp = policy.policy(forRoot: policy.roots[0])
        #expect(tmp.rules.map(\.name) == ["tmp-expiry"] && tmp.roots.isEmpty && tmp.discoveringTrash.isEmpty)
        #expect(tmp.pressure.map(\.name) == ["low"])
        let varTmp = policy.policy(forRoot: policy.roots[1])
        #expect(varTmp.rules.map(\.name) == ["residue"] && varTmp.pressure.isEmpty)
        #expect(varTmp.sourceBytes == policy.sourceBytes, "a root's plan is fingerprinted by the same file")
    }

    @Test("a discovered trash's policy is the one trash rule, scoped to the root itself, no longer discovering")
    func discoveredTrash() throws {
        let policy = try PolicyLoader.load(yaml: Self.policy, file: "p.yaml").policy
        let trash = policy.policy(forDiscoveredTrash: policy.discoveringTrash[0])
        #expect(trash.rules.count == 1 && trash.rules[0].path.isRoot && !trash.rules[0].discovers)
        #expect(trash.layout.isEmpty && trash.pressure.isEmpty && trash.roots.isEmpty)
    }

    @Test("~/ expands against an absolute home; without one there is no root")
    func homeExpansion() {
        let root = PolicyRoot(path: "~/.cache/", rules: ["x"])
        #expect(root.isHomeRelative)
        #expect(root.resolved(home: "/home/ana/") == "/home/ana/.cache")
        #expect(root.resolved(home: nil) == nil && root.resolved(home: "relative") == nil)
        #expect(PolicyRoot(path: "/srv/x/", rules: []).resolved(home: nil) == "/srv/x")
    }

    @Test("state folder names are systemd-escape --path's, so two roots never share one")
    func stateNames() {
        #expect(RootChecks.stateFolderName("/var/tmp") == "var-tmp")
        #expect(RootChecks.stateFolderName("/var-tmp") == "var\\x2dtmp")
        #expect(RootChecks.stateFolderName("/") == "-")
        #expect(RootChecks.stateFolderName("/v/.Trash-0") == "v-.Trash\\x2d0")
        #expect(RootChecks.stateFolderName("/a b") == "a\\x20b")
        #expect(RootChecks.nests("/a", "/a/b") && RootChecks.nests("/", "/x") && !RootChecks.nests("/a", "/ab"))
    }

    @Test("a discovering rule named by a root, a second discovering rule, a root without rules: errors at their place")
    func errors() {
        let head = "version: 1\nname: t\nrules:\n  - { name: e, path: ., expire: 1d }\n  - { name: b, trash: { retain: 1d, discover: true } }\n"
        #expect(PolicyLoaderTests.errors(head + "roots:\n  - { path: /x, rules: [e, b] }\n")
                == ["7:28: root '/x': rule 'b' has 'discover: true', so it runs on the trash folders discovery finds; it is named by no root"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: c, trash: { retain: 2d, discover: true } }\n")
                == ["6:5: rule 'c': a second 'discover: true' trash rule would run on the same trash folders as 'b'; keep one"])
        #expect(PolicyLoaderTests.errors(head + "roots:\n  - { path: /x, rules: [] }\n")
                == ["4:5: rule 'e' is named by no root in 'roots:', so it would never run; add it to a root's rules (or write enabled: false)",
                    "7:13: root '/x': no rules; name the rules that apply under it (rules: [NAME, ...])"])
        #expect(PolicyLoaderTests.errors(head + "roots:\n  - { path: /x/../y, rules: [e] }\n  - { rules: [e] }\n")
                == ["7:13: root '/x/../y': write the root without '.' or '..' components",
                    "8:5: root entry: missing 'path' (an absolute directory, or ~/... for --user runs)"])
    }

    @Test("extends inherits the parent's roots unless the file writes its own")
    func inheritance() throws {
        let dir = try PolicyInheritanceTests.folder([
            "base.yaml": "version: 1\nname: base\nrules:\n  - { name: e, path: ., expire: 1d }\nroots:\n  - { path: /srv/a, rules: [e] }\n",
            "child.yaml": "version: 1\nname: child\nextends: ./base.yaml\n",
            "own.yaml": "version: 1\nname: own\nextends: ./base.yaml\nroots:\n  - { path: /srv/b, rules: [e] }\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try PolicyLoader.load(contentsOf: dir + "/child.yaml").policy.roots.map(\.path) == ["/srv/a"])
        #expect(try PolicyLoader.load(contentsOf: dir + "/own.yaml").policy.roots.map(\.path) == ["/srv/b"])
    }
}
