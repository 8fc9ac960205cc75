// The StoragePolicy library: plans and applies declarative storage policy over a directory tree.
// The library never prints; the policyctl executable owns the terminal.

/// The version of the policy language and plan format this library reads and writes.
public enum StoragePolicyVersion {
    public static let policyLanguage = 1
    public static let planFormat = 1
    public static let tool = "0.1.0"
}
