// The typed seams of apply keep the exact text the journal, JSON and messages always carried: a verb is its
// action's name, counts list in one fixed order, an operation's name is the call, a transaction kind its word.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

@Suite("Apply enums") struct ApplyEnumTests {
    @Test("a plan action's verb is the action's name, for every kind")
    func verbs() {
        let kinds: [Action.Kind] = [.delete, .rename(to: RelativePath("b")!), .trash(to: RelativePath("t/b")!), .mkdir,
                                    .setxattr(name: "user.x", value: []), .writeTag, .unmark(name: "user.x"), .untag]
        for kind in kinds { #expect(StepVerb(kind).rawValue == kind.name) }
        // An action kind's ordinal indexes its name (the plan summary and resolution count by it).
        for kind in kinds { #expect(Action.Kind.names[kind.ordinal] == kind.name) }
        #expect(Set(kinds.map(\.ordinal)).count == kinds.count)
        #expect(StepVerb.writeTag.rawValue == "write-tag")
    }

    @Test("a verb's ordinal is its position among all verbs, which is the order counts are shown in")
    func ordinals() {
        #expect(StepVerb.allCases.map(\.ordinal) == Array(0..<StepVerb.allCases.count))
        #expect(StepVerb.allCases.sorted() == StepVerb.allCases)
        #expect(ActionCounts().isEmpty && !([.untag: 1] as ActionCounts).isEmpty)
    }

    @Test("counts list in the verbs' order, zero counts left out, and read back from the journal's names")
    func counts() throws {
        var counts = ActionCounts()
        counts[.mkdir] += 2
        counts[.unset] += 1
        counts[.delete] += 3
        counts[.restore] += 0
        counts[.writeTag] += 1
        #expect(counts.map { "\($0.count) \($0.verb)" } == ["3 delete", "2 mkdir", "1 write-tag", "1 unset"])
        #expect(counts.total == 7)
        #expect(counts.byName == ["delete": 3, "mkdir": 2, "write-tag": 1, "unset": 1])
        #expect(ActionCounts(names: ["delete": 3, "mkdir": 2, "write-tag": 1, "unset": 1, "no-such-verb": 9]) == counts)
        let json = try JSONEncoder().encode(counts)
        #expect(try JSONDecoder().decode([String: Int].self, from: json) == counts.byName)
        #expect(try JSONDecoder().decode(ActionCounts.self, from: json) == counts)
    }

    @Test("every system call reads back from its name; names no call failed keep their text")
    func operations() {
        for call in FileSystemError.Operation.calls { #expect(FileSystemError.Operation(name: call.name) == call) }
        #expect(FileSystemError.Operation.posixFallocate.name == "posix_fallocate")
        #expect(FileSystemError.Operation(name: "mount point; not entered") == .mountPoint)
        #expect(FileSystemError.Operation(name: "renameat") == .other("renameat"))
        #expect(FileSystemError(.renameat2, path: RelativePath("a")!, errno: .permissionDenied).description
                == "a: Permission denied (EACCES) [renameat2]")
        // The root itself is named, not shown as '.' (issue 29: a missing root read as the working directory).
        #expect(FileSystemError(.open, path: .root, errno: .noSuchFile).description == "the root: No such file or directory (ENOENT) [open]")
        #expect(FileSystemError(.refused("owned by uid 5; fix it"), path: .root, errno: .notPermitted).operation.name
                == "refused: owned by uid 5; fix it")
    }

    @Test("apply's phases run directories, labels, moves, deletions, the last two deepest first")
    func phases() {
        let a = RelativePath("a")!
        #expect(Applier.phase(of: Action(kind: .mkdir, path: a, rule: "r", reason: "")) == .directories)
        #expect(Applier.phase(of: Action(kind: .untag, path: a, rule: "r", reason: "")) == .labels)
        #expect(Applier.phase(of: Action(kind: .trash(to: a), path: a, rule: "r", reason: "")) == .moves)
        #expect(Applier.phase(of: Action(kind: .delete, path: a, rule: "r", reason: "")) == .deletions)
        #expect(Applier.Phase.directories < .labels && Applier.Phase.labels < .moves && Applier.Phase.moves < .deletions)
        #expect(!Applier.Phase.labels.deepestFirst && Applier.Phase.moves.deepestFirst)
    }

    @Test("transaction kinds are the journal's words")
    func kinds() {
        #expect(TransactionKind.allCases.map(\.rawValue) == ["apply", "trash", "restore", "undo", "purge"])
        #expect(TransactionSummary.Outcome.rolledBack.rawValue == "rolled-back")
    }
}
