// swift-tools-version:6.0
// A package outside policyctl's, as an app's would be: a path dependency on the repository root, Swift 6
// language mode, and only the StoragePolicy product's public API (no @testable, no `package` access, which
// SwiftPM grants only inside one package). OutsidePackageTests (EndToEndTests) builds and runs it.
import PackageDescription

let package = Package(
    name: "OutsidePackage",
    // What the library declares: its locks are the standard library's Synchronization (Docs/library.md).
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        // Named: a path dependency's identity is its folder's name, which differs between checkouts
        // (a worktree, CI's clone); the name is what `.product(package:)` below matches.
        .package(name: "policyctl", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "OutsideApp",
            dependencies: [.product(name: "StoragePolicy", package: "policyctl")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
