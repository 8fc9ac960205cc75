// What the walker calls and what it is told: the visitor protocol, why a directory was skipped, the walk's options.
// The walk itself (Walker, WalkRun) is in the evaluation layer, beside its one visitor: see Walker.swift there.

/// What the walker calls. `Directory` is the visitor's own state for one directory, kept until its subtree
/// is finished; `Worker` is per-thread scratch space, handed back when the walk ends.
package protocol WalkVisitor: Sendable {
    associatedtype Directory: AnyObject & Sendable
    associatedtype Worker: AnyObject & Sendable

    func makeWorker() -> Worker
    /// Called once per directory, on any thread. Call `listing.enter(i)` for the subdirectories to walk.
    func visit(_ listing: DirectoryListing, parent: Directory?, worker: Worker) -> Directory
    /// A subdirectory passed to `enter` could not be walked; its parent carries on without it.
    func couldNotEnter(_ path: RelativePath, because reason: WalkSkipReason, parent: Directory, worker: Worker)
    /// Called once every subdirectory entered from `directory` has finished: bottom-up, on any thread;
    /// siblings may finish at the same time, so a visitor merging into a parent must lock.
    func finished(_ directory: Directory, worker: Worker)
}

/// Why a directory was not walked.
package enum WalkSkipReason: Sendable, Hashable, CustomStringConvertible {
    /// It could not be opened or read (EACCES, EIO, ...).
    case unreadable(Errno)
    /// It was gone by the time the walker got to it.
    case vanished
    /// It is no longer the directory that was listed (now a symlink or a file, or an ancestor changed).
    case replaced
    /// It is a mount point (another file system, or a bind mount of any folder): the walk never enters it.
    case otherFileSystem

    package var description: String {
        switch self {
        case .unreadable(let e): "cannot read directory: \(e)"
        case .vanished: "vanished during the walk"
        case .replaced: "replaced during the walk (no longer the directory that was listed)"
        case .otherFileSystem: "mount point; not entered"
        }
    }
}

package struct WalkOptions: Sendable {
    /// Threads reading directories at once; 0 means one per available core.
    package var threads: Int
    /// Directory descriptors the walk may keep open at once beyond the ones being read; nil derives it
    /// from RLIMIT_NOFILE. Past it, directories are reopened by name from an open ancestor, checking each
    /// reopened directory's device and inode.
    package var openDirectoryBudget: Int?

    /// Tests only: called with an entry's path just before the walker stats it, so a test can make the
    /// entry vanish between listing and stat for real.
    package var willStat: (@Sendable (RelativePath) -> Void)?
    /// Looked at before each directory is read: once set, no further directory is opened, every thread stops
    /// and `walk` throws `.cancelled` (so a cancel takes effect within one directory's work).
    package var cancellation: CancellationFlag?

    package init(threads: Int = 0, openDirectoryBudget: Int? = nil) {
        self.threads = threads; self.openDirectoryBudget = openDirectoryBudget
    }
}
