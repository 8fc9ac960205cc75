// Undoes a transaction's changes in reverse order by looking at the tree, so running it twice (after a crash
// mid-rollback) converges. Never deletes anything: what cannot go back stays in staging and is reported.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Rollback {
    /// Something that could not be put back; it is kept, never removed.
    struct Kept: Sendable, Hashable {
        public var path: RelativePath
        public var reason: String
    }

    struct Result: Sendable {
        /// Changes undone by this run.
        var undone = 0
        var kept: [Kept] = []
        /// Undo steps that failed with an I/O error: the rollback is incomplete, run recovery again.
        var failures: [FileSystemError] = []
        /// Journal writes that failed; the tree is restored but the journal may not say so.
        var journalErrors: [FileSystemError] = []
        var complete: Bool { failures.isEmpty }
    }

    private enum Undo {
        case nothing
        case undone([RelativePath])
        case kept(Kept)
    }

    let transaction: String
    let lock: ApplyLock
    let journal: Journal
    private(set) var sequence: Int
    let intents: [Intent]
    var undone: Set<Int>
    private let directories: DirectoryCache
    private var staging: DirectoryHandle?
    private var stagingParent: DirectoryHandle?

    init(transaction: String, lock: ApplyLock, journal: Journal, sequence: Int, intents: [Intent], undone: Set<Int>) {
        self.transaction = transaction
        self.lock = lock
        self.journal = journal
        self.sequence = sequence
        self.intents = intents
        self.undone = undone
        self.directories = DirectoryCache(root: lock.state.root, device: lock.state.rootStatus.device)
    }

    private mutating func record(_ type: JournalRecord.Kind) -> JSONWriter {
        sequence += 1
        return Transaction.header(id: transaction, sequence: sequence, type: type)
    }

    private mutating func write(_ w: JSONWriter, flush: Bool, into result: inout Result) {
        journal.append(w)
        guard flush else { return }
        do { try journal.flush() } catch { result.journalErrors.append(error) }
    }

    mutating func run(reason: String) -> Result {
        var result = Result()
        var w = record(.rollback)
        w.string("reason", reason)
        write(w, flush: true, into: &result)

        let name = FileName(unchecked: Array(transaction.utf8))
        do {
            stagingParent = try lock.state.stagingParent(create: false)
            staging = try stagingParent?.openDirectory(name)
        } catch where error.errno == .noSuchFile {
            // Never made (a crash before the staging folder existed), or already removed.
        } catch {
            // Without staging nothing staged can go back, and the folder would outlive the transaction.
            result.failures.append(error)
            return result
        }

        var batch: [Int] = []
        var touched: Set<RelativePath> = []
        for intent in intents.reversed() where !undone.contains(intent.op) {
            let outcome: Undo
            do {
                outcome = try undo(intent)
            } catch {
                result.failures.append(error)
                continue
            }
            switch outcome {
            case .nothing: break
            case .undone(let directories):
                result.undone += 1
                touched.formUnion(directories)
                CrashPoint.changeMade()
            case .kept(let kept):
                if !result.failures.isEmpty, case .mkdir = intent.change {
                    // An undo that failed earlier in this run (a file it should have removed) may be what keeps this
                    // directory from being empty: not final, the next recovery tries again.
                    continue
                }
                result.kept.append(kept)
                var k = record(.kept)
                k.int("op", intent.op)
                k.path("path", kept.path)
                k.string("reason", kept.reason)
                write(k, flush: false, into: &result)
            }
            batch.append(intent.op)
            undone.insert(intent.op)
            if batch.count >= 64 {
                progress(&batch, touched: &touched, into: &result)
            }
        }
        progress(&batch, touched: &touched, into: &result)
        guard result.complete else { return result }

        if let stagingParent {
            // Empty once everything went back; kept items keep it (and are listed in the journal).
            do {
                try stagingParent.removeDirectory(name)
                try stagingParent.sync()
            } catch where error.errno == .noSuchFile || error.errno == .directoryNotEmpty {
            } catch {
                result.failures.append(error)
                return result
            }
        }
        var end = record(.end)
        end.string("outcome", "rolled-back")
        end.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
        if !result.kept.isEmpty { end.int("kept", result.kept.count) }
        write(end, flush: true, into: &result)
        return result
    }

    /// Makes the undos so far durable (directories first, then the `undone` record naming them).
    private mutating func progress(_ batch: inout [Int], touched: inout Set<RelativePath>, into result: inout Result) {
        guard !batch.isEmpty else { return }
        for path in touched.sorted(by: >) {
            do {
                try directories.directoryIfPresent(path)?.sync()
            } catch {
                result.failures.append(error)
            }
        }
        try? staging?.sync()
        touched.removeAll()
        var w = record(.undone)
        w.integers("ops", batch)
        write(w, flush: true, into: &result)
        batch.removeAll()
    }

    /// Undoes one change if the tree shows it was made; returns the directories whose entries changed.
    private mutating func undo(_ intent: Intent) throws(FileSystemError) -> Undo {
        switch intent.change {
        case .stage(let path, let name):
            guard let staging, try staging.statusIfPresent(of: name) != nil else { return .nothing }
            guard let parent = try directories.directoryIfPresent(path.parent) else {
                return .kept(Kept(path: path, reason: "its folder is gone; kept as .policyctl/staging/\(transaction)/\(name)"))
            }
            do {
                try staging.rename(name, to: path.lastComponent!, in: parent, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: path, reason: "something new is at that path; kept as .policyctl/staging/\(transaction)/\(name)"))
            }
            return .undone([path.parent])

        case .rename(let from, let to):
            guard let identity = intent.identity,
                  let destination = try directories.directoryIfPresent(to.parent),
                  let status = try destination.statusIfPresent(of: to.lastComponent!),
                  status.device == identity.device, status.inode == identity.inode else { return .nothing }
            guard let source = try directories.directoryIfPresent(from.parent) else {
                return .kept(Kept(path: from, reason: "its folder is gone; kept at \(to.escaped)"))
            }
            do {
                try destination.rename(to.lastComponent!, to: from.lastComponent!, in: source, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: from, reason: "something new is at that path; kept at \(to.escaped)"))
            }
            directories.forget(under: to)
            return .undone([from.parent, to.parent])

        case .mkdir(let path):
            guard let parent = try directories.directoryIfPresent(path.parent),
                  let status = try parent.statusIfPresent(of: path.lastComponent!),
                  status.type == .directory else { return .nothing }
            do {
                try parent.removeDirectory(path.lastComponent!)
            } catch where error.errno == .directoryNotEmpty {
                return .kept(Kept(path: path, reason: "created by this transaction but no longer empty; kept"))
            } catch where error.errno == .noSuchFile {
                return .nothing
            }
            directories.forget(under: path)
            return .undone([path.parent])

        case .setxattr(let path, let attribute, let value, let previous):
            guard let parent = try directories.directoryIfPresent(path.parent) else { return .nothing }
            let status: FileStatus?
            if let last = path.lastComponent { status = try parent.statusIfPresent(of: last) } else { status = try parent.status() }
            guard let status, status.type != .symlink else { return .nothing }
            if let identity = intent.identity, status.device != identity.device || status.inode != identity.inode {
                return .nothing
            }
            let current = try parent.extendedAttribute(attribute, of: path.lastComponent)
            guard current != previous else { return .nothing }
            // Only put back what this transaction wrote: a value someone else set since is theirs.
            guard current == value else {
                return .kept(Kept(path: path, reason: "attribute \(attribute) changed by someone else since; left as it is"))
            }
            if let previous {
                try parent.setExtendedAttribute(attribute, to: previous, of: path.lastComponent)
            } else {
                try parent.removeExtendedAttribute(attribute, of: path.lastComponent)
            }
            return .undone([])

        case .create(let path, let temp, let contents):
            guard let parent = try directories.directoryIfPresent(path.parent) else { return .nothing }
            var changed = false
            if try parent.statusIfPresent(of: temp) != nil {
                try parent.removeFileIfPresent(temp)
                changed = true
            }
            if let status = try parent.statusIfPresent(of: path.lastComponent!), status.type == .regular,
               status.size == Int64(contents.count),
               try parent.readFile(path.lastComponent!, limit: contents.count + 1) == contents {
                try parent.removeFileIfPresent(path.lastComponent!)
                changed = true
            }
            return changed ? .undone([path.parent]) : .nothing
        }
    }
}
