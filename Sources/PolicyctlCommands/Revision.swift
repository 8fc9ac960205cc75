// The git revision policyctl was built from. `make build` and scripts/build-deb.sh stamp it for the
// duration of a release build; a plain `swift build` says "development".

enum Revision {
    static let built = "development"
}
