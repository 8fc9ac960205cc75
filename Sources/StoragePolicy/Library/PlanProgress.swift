// A progress report from a running plan: how many entries the walk has seen and where it is.
// A plain value, safe to send anywhere; producing one never slows the walk by more than a callback.

@_spi(Layers) import StoragePolicyFileSystem

/// How far a plan's walk has got.
public struct PlanProgress: Sendable, Hashable {
    /// Entries listed so far, all threads together.
    public var entriesScanned: Int
    /// The directory being read when this report was made, relative to the root.
    public var directory: RelativePath

    /// A progress report.
    package init(entriesScanned: Int, directory: RelativePath) {
        self.entriesScanned = entriesScanned; self.directory = directory
    }
}
