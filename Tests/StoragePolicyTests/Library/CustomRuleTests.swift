// Custom rules: judged in the walk like built-in kinds, their verdicts planned, applied through the
// journal, reported by audit. Trees live under /tmp; nothing here touches process-wide state.
import Testing
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Library: custom rules") struct CustomRuleTests {
    static func tree() throws -> Tree {
        try Tree {
            Dir("Documents") {
                File("empty-old.log", age: .hours(2), size: 0)
                File("empty-new.log", age: .minutes(5), size: 0)
                File("full.log", age: .hours(2), size: 10)
                File("Report.PDF", age: .hours(2))
                Dir("nested") { File("empty.dat", age: .days(1), size: 0) }
                Dir("EmptyDir", age: .days(1))
            }
            Dir("Other") { File("empty.log", age: .days(1), size: 0) }
        }
    }

    @Test("verdicts become actions and violations in the plan, only for entries in scope that match") func planned() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let policy = try Policy("custom") {
            Rule.custom("zero-bytes", in: "Documents", ZeroByteFiles(olderThan: .hours(1))).excluding("nested/**")
            Rule.custom("pdf-names", in: "Documents", summary: "PDF names are lowercase.") { entry in
                let name = entry.name.escaped
                guard name.hasSuffix(".PDF") else { return [] }
                return [.rename(to: FileName(name.lowercased())!, reason: "uppercase extension"),
                        .violation("was named '\(name)'")]
            }.type(.file)
            Rule.custom("no-directory-deletes", in: "Documents", summary: "Tries to delete directories.") { entry in
                entry.type == .directory && entry.scopePath == RelativePath("EmptyDir")! ? [.delete(reason: "empty")] : []
            }
        }
        let plan = try StorageEngine(policy: policy, root: tree.root, planOptions: tree.options()).plan()
        #expect(plan.lines == [
            "rename Documents/Report.PDF -> Documents/report.pdf",
            "delete Documents/empty-old.log",
        ])
        #expect(plan.actions.map(\.rule) == ["pdf-names", "zero-bytes"])
        #expect(plan.actions[1].reason == "zero bytes")
        #expect(plan.actions[1].identity != nil)
        #expect(plan.findings == [
            "no-directory-deletes: Documents/EmptyDir: empty: custom rules cannot delete directories; not deleted",
            "pdf-names: Documents/Report.PDF: was named 'Report.PDF'",
        ])
    }

    @Test("each selected entry is judged exactly once, in the same walk as the built-in rules") func singlePass() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let seen = Mutex<[String]>([])
        let policy = try Policy("custom") {
            Rule.expire("old-logs", in: "Documents", after: .days(30)).matching("**/*.log")
            Rule.custom("observer", in: "Documents", summary: "Records what it sees.") { entry in
                seen.withLock { $0.append("\(entry.type.rawValue) \(entry.scopePath.escaped)") }
                return []
            }
        }
        let plan = try StorageEngine(policy: policy, root: tree.root, planOptions: tree.options()).plan()
        #expect(plan.actions.isEmpty)
        #expect(seen.withLock { $0.sorted() } == [
            "directory EmptyDir", "directory nested",
            "file Report.PDF", "file empty-new.log", "file empty-old.log", "file full.log", "file nested/empty.dat",
        ])
    }

    @Test("an audit-mode custom rule reports what it would do and changes nothing") func auditMode() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let policy = try Policy("custom") {
            Rule.custom("zero-bytes", in: "Documents", ZeroByteFiles(olderThan: .hours(1))).audit().severity(.error)
        }
        let engine = StorageEngine(policy: policy, root: tree.root, planOptions: tree.options())
        let plan = try engine.plan()
        #expect(plan.actions.isEmpty)
        #expect(plan.findings == [
            "zero-bytes: Documents/empty-old.log: zero bytes (would delete)",
            "zero-bytes: Documents/nested/empty.dat: zero bytes (would delete)",
        ])
        let audit = try engine.audit()
        #expect(audit.findings.map(\.rule) == ["zero-bytes", "zero-bytes"])
        #expect(audit.findings.allSatisfy { $0.severity == .error })
        #expect(!audit.passes)
        #expect(audit.rules.map(\.kind) == ["custom"])
        #expect(audit.rules.first?.summary == "Empty files older than 1h are deleted.")
    }

    @Test("custom actions are applied through the journal like built-in ones") func applied() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let policy = try Policy("custom") {
            Rule.expire("old-logs", in: "Other", after: .hours(1))
            Rule.custom("zero-bytes", in: "Documents", ZeroByteFiles(olderThan: .hours(1)))
            Rule.custom("tag-pdfs", in: "Documents", summary: "PDFs carry a tag.") { entry in
                entry.name.escaped.hasSuffix(".PDF") && entry.extendedAttribute("user.kind") == nil
                    ? [.setExtendedAttribute(name: "user.kind", value: Array("pdf".utf8), reason: "untagged")] : []
            }
        }
        let engine = StorageEngine(policy: policy, root: tree.root, planOptions: tree.options())
        let result = try engine.apply()
        #expect(result.counts == [.delete: 3, .setxattr: 1])
        #expect(result.skipped.isEmpty)
        let after = Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) })
        #expect(!after.contains("Documents/empty-old.log"))
        #expect(!after.contains("Documents/nested/empty.dat"))
        #expect(!after.contains("Other/empty.log"))
        #expect(after.contains("Documents/empty-new.log"))
        #expect(after.contains("Documents/full.log"))
        let tagged = Manifest.take(tree.root).first { String(decoding: $0.path, as: UTF8.self) == "Documents/Report.PDF" }
        #expect(tagged?.xattrs["user.kind"] == Array("pdf".utf8))

        let journal = try engine.journal()
        #expect(journal.count == 1)
        #expect(journal.first?.id == result.transaction)
        #expect(journal.first?.policy == "custom")
        #expect(journal.first?.outcome == .committed)
        #expect(journal.first?.counts == [.delete: 3, .setxattr: 1])
        // Planned again, nothing is left to do: the custom rule now sees the tree as it wants it.
        #expect(try engine.plan().actions.isEmpty)
    }

    @Test("two boxes of equal rule values are equal; different values are not") func identity() {
        #expect(AnyCustomRule(ZeroByteFiles(olderThan: .hours(1))) == AnyCustomRule(ZeroByteFiles(olderThan: .hours(1))))
        #expect(AnyCustomRule(ZeroByteFiles(olderThan: .hours(1))) != AnyCustomRule(ZeroByteFiles(olderThan: .hours(2))))
        #expect(Rule.Kind.custom(AnyCustomRule(ZeroByteFiles(olderThan: .hours(1)))).keyword == "custom")
    }

    @Test("a backup verdict sets this platform's marker, and explain names the custom rule") func backupAndExplain() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let policy = try Policy("custom") {
            Rule.custom("logs-out-of-backup", in: "Documents", summary: "Logs are excluded from backup.") { entry in
                entry.name.escaped.hasSuffix(".log") && entry.extendedAttribute(Markers.backupAttribute.name) == nil
                    ? [.excludeFromBackup(reason: "a log")] : []
            }.type(.file).matching("*.log")
        }
        let engine = StorageEngine(policy: policy, root: tree.root, planOptions: tree.options())
        let plan = try engine.plan()
        #expect(plan.lines == [
            "setxattr Documents/empty-new.log \(Markers.backupAttribute.name)",
            "setxattr Documents/empty-old.log \(Markers.backupAttribute.name)",
            "setxattr Documents/full.log \(Markers.backupAttribute.name)",
        ])
        #expect(plan.actions.allSatisfy { $0.kind == .setxattr(name: Markers.backupAttribute.name, value: Markers.backupAttribute.value) })
        let explained = try engine.explain(RelativePath("Documents/full.log")!)
        #expect(explained.rules.map(\.kind) == ["custom"])
        #expect(explained.rules.first?.findings == [
            "inside the scope 'Documents' as 'full.log'", "selected by match '*.log'",
            "judged by a custom rule: Logs are excluded from backup.",
        ])
        #expect(explained.actions.map(\.line) == ["setxattr Documents/full.log \(Markers.backupAttribute.name)"])
        _ = try engine.apply(plan)
        #expect(try engine.plan().actions.isEmpty)
    }
}
