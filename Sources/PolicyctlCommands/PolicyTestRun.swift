// One test of `policyctl test`: its fixture built in a private temporary folder (mkdtemp, 0700, so no other
// user can reach into it while it stands), the policy planned there as of the test's `at` (plan --at), and the
// planned actions and violations compared with the expected ones.
import StoragePolicy

enum PolicyTestRun {
    /// What one test came to.
    enum Outcome {
        case passed
        /// The expected and planned lines, each sorted: what the diff is made from.
        case failed(expected: [String], planned: [String])
        case skipped(String)
        /// The fixture could not be built or the plan could not be made: the message names the path and why.
        case broken(String)
    }

    static func run(_ test: PolicyTestFile.Case, policy: Policy) -> Outcome {
        if test.needsRoot && system_geteuid() != 0 { return .skipped("skipped: needs root (the tree names an owner or group)") }
        guard let base = system_mkdtemp("/tmp/policyctl-test-XXXXXX") else {
            return .broken("cannot create a temporary folder in /tmp: \(system_errno); check that /tmp exists and is writable")
        }
        defer { remove(base) }
        let root = base + "/root"
        do {
            let folder = try DirectoryHandle.open(root: base)
            try folder.makeDirectory(FileName(unchecked: Array("root".utf8)), permissions: 0o755)
            try build(test.tree, in: try DirectoryHandle.open(root: root), atNs: test.atNs)
        } catch {
            return .broken("cannot build the fixture: \(error)")
        }
        let plan: Plan
        do {
            plan = try StorageEngine(policy: policy, root: root, planOptions: PlanOptions(now: test.atNs)).plan()
        } catch {
            return .broken("cannot plan the fixture: \(error)")
        }
        let planned = lines(plan)
        let expected = (test.actions.map { "action " + $0 } + test.violations.map { "violation " + $0 }).sorted()
        return planned == expected ? .passed : .failed(expected: expected, planned: planned)
    }

    /// The plan in the test file's terms, sorted: `action delete tmp/old.log`, `action rename A -> B`,
    /// `violation RULE PATH`.
    static func lines(_ plan: Plan) -> [String] {
        let actions = plan.actions.map { a -> String in
            switch a.kind {
            case .rename(let to), .trash(let to): "action \(a.kind.name) \(a.path.escaped) -> \(to.escaped)"
            default: "action \(a.kind.name) \(a.path.escaped)"
            }
        }
        return (actions + plan.violations.map { "violation \($0.rule) \($0.path.escaped)" }).sorted()
    }

    /// Builds `tree` under `root`: folders the paths imply first, then each entry, then every time, last (making an
    /// entry changes its folder's mtime). A folder only implied is as old as `at`.
    static func build(_ tree: [PolicyTestFile.Entry], in root: DirectoryHandle, atNs: Int64) throws(FileSystemError) {
        var ages: [(RelativePath, Int64)] = []
        var made = Set<RelativePath>()
        for entry in tree {
            var prefix = RelativePath.root
            for component in entry.path.parent.components {
                prefix = prefix.appending(component)
                if made.insert(prefix).inserted {
                    try root.openDirectory(at: prefix.parent).makeDirectory(component)
                    ages.append((prefix, 0))
                }
            }
            guard let name = entry.path.lastComponent else { continue }
            let parent = try root.openDirectory(at: entry.path.parent)
            switch entry.kind {
            case .directory:
                // Named after a path below it already implied it: it only gets its own age.
                if made.insert(entry.path).inserted { try parent.makeDirectory(name) }
                ages.removeAll { $0.0 == entry.path }
            case .file:
                let file = try parent.openFile(name, options: [.writeOnly, .create, .exclusive], permissions: 0o644)
                if !entry.content.isEmpty { try file.write(entry.content) }
            case .symlink:
                try parent.makeSymlink(name, to: Array(entry.target!.utf8))
            }
            for (attribute, value) in entry.xattrs { try parent.setExtendedAttribute(attribute, to: value, of: name) }
            if entry.owner != nil || entry.group != nil {
                let status = try parent.status(of: name)
                try parent.changeOwner(of: name, user: entry.owner ?? status.userID, group: entry.group ?? status.groupID)
            }
            ages.append((entry.path, entry.ageNs))
        }
        for (path, age) in ages {
            guard let name = path.lastComponent else { continue }
            let ns = atNs - age
            try root.openDirectory(at: path.parent).setTimes(of: name, accessNs: ns, modificationNs: ns)
        }
    }

    private static func remove(_ base: String) {
        // Through descriptors, never following a symlink the fixture made; a failure leaves /tmp to its cleaner.
        guard let slash = base.lastIndex(of: "/"), let parent = try? DirectoryHandle.open(root: String(base[..<slash])),
              let name = FileName(String(base[base.index(after: slash)...])) else { return }
        try? parent.removeTree(name)
    }

    /// A unified-style diff of two sorted lists: ` ` both, `-` expected only, `+` planned only.
    static func diff(expected: [String], planned: [String]) -> [String] {
        var out: [String] = []
        var i = 0, j = 0
        while i < expected.count || j < planned.count {
            if i < expected.count && j < planned.count && expected[i] == planned[j] {
                out.append(" " + expected[i]); i += 1; j += 1
            } else if j >= planned.count || (i < expected.count && expected[i] < planned[j]) {
                out.append("-" + expected[i]); i += 1
            } else {
                out.append("+" + planned[j]); j += 1
            }
        }
        return out
    }
}
