// ROOT/.policyctl/journal.reserve: disk space set aside while there is some, given back to the file system
// when a journal write meets ENOSPC, so a cleanup can still be journaled (and so free space) on a full disk.
// Best effort on creation; never holds data, never read.

@_spi(Layers) import StoragePolicyFileSystem

/// Space kept for the journal on the root's filesystem: a preallocated file released on ENOSPC.
package final class JournalReserve {
    package static let fileName = FileName(unchecked: Array("journal.reserve".utf8))
    /// Enough for a first group of 256 intents with long paths, plus the skip, commit and end records: about
    /// 600 staged deletes fit on a disk with no byte free.
    static let size: Int64 = 256 << 10
    /// Below this a reserve is not worth a file.
    static let smallest: Int64 = 4 << 10

    private let directory: DirectoryHandle
    /// True once this process gave the reserve's space back (a second ENOSPC then fails the write).
    private(set) var released = false

    package init(in directory: DirectoryHandle) {
        self.directory = directory
    }

    /// Creates or tops up the reserve, as large as fits up to `size` (halving on ENOSPC). Errors are ignored:
    /// a missing reserve only matters on a full disk, and then the journal write itself reports ENOSPC.
    func replenish() {
        guard let file = try? directory.openFile(JournalReserve.fileName, options: [.writeOnly, .create], permissions: 0o600),
              let status = try? file.status() else { return }
        guard status.allocatedSize < JournalReserve.size else { return }
        var length = JournalReserve.size
        while length >= JournalReserve.smallest {
            if (try? file.allocate(length)) != nil {
                try? file.sync()
                released = false
                return
            }
            length /= 2
        }
    }

    /// True when the reserve holds its whole size (a full disk set aside none, or only part).
    var isFull: Bool {
        guard let file = try? directory.openFile(JournalReserve.fileName, options: [.readOnly]),
              let status = try? file.status() else { return false }
        return status.allocatedSize >= JournalReserve.size
    }

    /// Gives the reserve's blocks back (truncated to nothing, fsynced so the filesystem frees them now).
    /// Returns false when there was nothing to give back.
    func release() -> Bool {
        guard !released else { return false }
        released = true
        guard let file = try? directory.openFile(JournalReserve.fileName, options: [.writeOnly]),
              let status = try? file.status(), status.allocatedSize > 0 else { return false }
        do {
            try file.truncate(to: 0)
            try file.sync()
        } catch {
            return false
        }
        return true
    }
}
