// The git revision policyctl was built from. `make build` (and so `make install`) and scripts/build-deb.sh
// stamp it for the duration of a release build (scripts/stamp-revision.sh; "unknown" outside a git checkout).
// A plain `swift build` or `swift run` leaves it unstamped, and `policyctl version` says so rather than
// pretend to know.

enum Revision {
    static let built = "development"

    /// What `policyctl version` prints in parentheses: the revision, or what an unstamped build is.
    static var described: String {
        built == "development" ? "development build: no revision recorded; 'make build' records it" : built
    }
}
