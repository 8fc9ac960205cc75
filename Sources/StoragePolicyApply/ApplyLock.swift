// Proof that this process holds the exclusive flock on ROOT/.policyctl/lock; released when it goes away
// (or when the process dies, which is why flock and not a pid file). Never taken twice by one run.

@_spi(Layers) import StoragePolicyFileSystem

/// Proof that this process holds the root's exclusive lock; released when the value goes away.
package final class ApplyLock: Sendable {
    package let file: FileDescriptor
    /// The state folder the lock belongs to.
    package let state: StateDirectory

    package init(file: FileDescriptor, state: StateDirectory) {
        self.file = file
        self.state = state
        // The pid is only a hint for the "waiting for pid N" message; the flock is what excludes.
        try? file.truncate(to: 0)
        try? file.write(Array("\(system_getpid())\n".utf8))
    }

    /// The pid written by the current holder, when it can be read.
    static func holder(in state: StateDirectory) -> Int32? {
        guard let bytes = try? state.directory.readFile(StateDirectory.lockName, limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        return Int32(text)
    }
}

