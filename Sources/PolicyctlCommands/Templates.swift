// The reference policies of Policies/ as `init` and `demo` see them. They live in the library
// (StoragePolicy/Policy/BundledPolicies.swift, embedded from Policies/ at build time by Plugins/EmbedPolicies) because `extends:`
// resolves bundled names there too.
import StoragePolicy

typealias Templates = BundledPolicies
