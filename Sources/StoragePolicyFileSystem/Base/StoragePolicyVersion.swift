// The StoragePolicy library: plans and applies declarative storage policy over a directory tree.
// The library never prints; the policyctl executable owns the terminal.

/// The version of the policy language and plan format this library reads and writes.
public enum StoragePolicyVersion {
    /// The `version:` of policies this library reads.
    public static let policyLanguage = 1
    /// The `version` of plans this library writes and reads.
    public static let planFormat = 1
    /// The library's (and `policyctl`'s) version.
    public static let tool = "0.1.0"
}
