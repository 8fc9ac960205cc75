// Proves a policy stated in Swift plans exactly as the same policy loaded from YAML, on the same tree.
// Only the fingerprint differs: it hashes the policy's source, which a Swift policy does not have.
import Testing
import StoragePolicy
import TreeFixture

@Suite("Library: DSL and YAML plan alike") struct DSLPlanEquivalenceTests {
    /// The plan without its fingerprint (the policy file's digest and path).
    static func comparable(_ plan: Plan) -> Plan {
        var copy = plan
        copy.fingerprint = nil
        return copy
    }

    @Test("the app-sandbox policy in the DSL and Policies/ios-app-sandbox.yaml give identical plans") func identicalPlans() throws {
        let tree = try LibraryFixture.sandboxTree()
        defer { tree.remove() }
        let fromYAML = try StorageEngine(policy: LibraryFixture.loadedSandboxPolicy(), root: tree.root, planOptions: tree.options()).plan()
        let fromSwift = try StorageEngine(policy: LibraryFixture.sandboxPolicyInSwift(), root: tree.root, planOptions: tree.options()).plan()

        #expect(Self.comparable(fromSwift) == Self.comparable(fromYAML))
        #expect(fromSwift.lines == fromYAML.lines)
        #expect(fromSwift.findings == fromYAML.findings)
        #expect(fromSwift.summary == fromYAML.summary)
        // Not vacuous: the plan has work for several kinds.
        #expect(fromYAML.lines.sorted() == [
            "rename Documents/UserFiles/Download/Movie.MD -> Documents/UserFiles/Download/movie.md",
            "rename Documents/UserFiles/Notes.TXT -> Documents/UserFiles/notes.txt",
            "delete Documents/UserFiles/photo.jpg.download",
            "delete Documents/ExportTemp/export-1.zip",
            "mkdir Documents/UserFiles/Import",
            "mkdir Library/Application Support",
            "mkdir Library/Application Support/AppData",
            "mkdir Library/Caches/Downloading",
            "setxattr Library/Caches/Downloading \(Markers.backupAttribute.name)",
            "setxattr Library/Caches/Thumbnails \(Markers.backupAttribute.name)",
            "write-tag Library/Caches/Thumbnails",
            "delete tmp/old.dat",
            "delete tmp/session",
        ].sorted())
        #expect(fromYAML.findings == [
            "no-private-data-in-user-files: Documents/UserFiles/db.sqlite: forbidden (matches '**/*.sqlite')",
        ])
    }

    @Test("the DSL policy equals the loaded one, rule for rule") func sameModel() throws {
        var loaded = try LibraryFixture.loadedSandboxPolicy()
        loaded.source = nil
        loaded.sourceBytes = nil
        loaded.rules = loaded.rules.map { var r = $0; r.location = nil; return r }
        loaded.layout = loaded.layout.map { var l = $0; l.location = nil; return l }
        #expect(try LibraryFixture.sandboxPolicyInSwift() == loaded)
    }
}
