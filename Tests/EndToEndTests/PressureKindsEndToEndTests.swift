// Pressure through expire and trash rules, the built binary over a real tree, the free space given by debug
// builds' POLICYCTL_FREE_SPACE seam: below freeBelow, apply evicts the trash's kept items (with their
// .trashinfo) and then tmp's unexpired files, oldest first, down to each rule's minAge; the user's documents,
// the item trashed an hour ago and the file written half an hour ago stay. At 50 % free nothing is evicted.
import Foundation
import Testing

@Suite("pressure through expire and trash rules (binary, debug free-space seam)")
struct PressureKindsEndToEndTests {
    static let policy = """
        version: 1
        name: pressure-kinds
        pressure:
          - name: low-disk
            freeBelow: 10%
            freeUntil: 15%
            evict: [trash, tmp]
        rules:
          - name: tmp
            path: tmp
            regenerable: true
            expire: { after: 30d, minAge: 2h }
          - name: trash
            path: Trash
            regenerable: true
            trash: { retain: 30d, layout: freedesktop, minAge: 1d }

        """

    /// DeletionDate as the XDG spec writes it: local time, no zone.
    static func deletionDate(hoursAgo: Double) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return f.string(from: Date(timeIntervalSinceNow: -hoursAgo * 3600))
    }

    static func tree() throws -> (scratch: ScratchDirectory, root: String, policy: String) {
        let scratch = ScratchDirectory("pressure-kinds")
        let root = scratch.sub("root")
        try buildTree(at: root, [
            .dir("tmp"), .file("tmp/a", size: 20_000, ageHours: 5), .file("tmp/b", size: 20_000, ageHours: 3),
            .file("tmp/new", size: 20_000, ageHours: 0.5),
            .dir("docs"), .file("docs/mine.doc", size: 20_000, ageHours: 2000),
            .dir("Trash"), .dir("Trash/files"), .dir("Trash/info"),
            .file("Trash/files/old", size: 20_000, ageHours: 100), .file("Trash/files/recent", size: 20_000, ageHours: 100),
        ])
        for (name, hours) in [("old", 72.0), ("recent", 1.0)] {
            try "[Trash Info]\nPath=/home/u/\(name)\nDeletionDate=\(deletionDate(hoursAgo: hours))\n"
                .write(toFile: "\(root)/Trash/info/\(name).trashinfo", atomically: false, encoding: .utf8)
        }
        try writePolicy(scratch.path + "/p.yaml", policy)
        return (scratch, root, scratch.path + "/p.yaml")
    }

    static func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test("below freeBelow apply evicts the trash's kept items, then tmp's files oldest first, down to their minAge")
    func evicts() throws {
        let t = try Self.tree()
        let plan = try policyctl(["plan", "--policy", t.policy, "--root", t.root], environment: ["POLICYCTL_FREE_SPACE": "1000/100000000"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("pressure rule 'low-disk': 1000 B free of 95.4 MiB (0.0 %) < freeBelow 10%"), "\(plan)")
        let r = try policyctl(["apply", "--policy", t.policy, "--root", t.root, "--yes"], environment: ["POLICYCTL_FREE_SPACE": "1000/100000000"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.names(t.root + "/Trash/files") == ["recent"], "\(r)")
        #expect(Self.names(t.root + "/Trash/info") == ["recent.trashinfo"], "\(r)")
        #expect(Self.names(t.root + "/tmp") == ["new"], "\(r)")
        #expect(Self.names(t.root + "/docs") == ["mine.doc"], "\(r)")
    }

    @Test("at 50 % free the same policy evicts nothing")
    func roomy() throws {
        let t = try Self.tree()
        let r = try policyctl(["apply", "--policy", t.policy, "--root", t.root, "--yes"], environment: ["POLICYCTL_FREE_SPACE": "50000000/100000000"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.names(t.root + "/tmp") == ["a", "b", "new"], "\(r)")
        #expect(Self.names(t.root + "/Trash/files") == ["old", "recent"], "\(r)")
        #expect(r.stdout.contains("Nothing to do"), "\(r)")
    }
}
