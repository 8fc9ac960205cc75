// swift-tools-version:6.0
// policyctl: a storage-policy and maintenance engine. A thin executable over the StoragePolicy library;
// no outside Swift packages, only the toolchain and Debian's libyaml.
import PackageDescription

let package = Package(
    name: "policyctl",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "StoragePolicy", targets: ["StoragePolicy"]),
        .executable(name: "policyctl", targets: ["policyctl"]),
    ],
    targets: [
        .systemLibrary(
            name: "CYAML",
            path: "Sources/CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        .target(name: "CPosix", path: "Sources/CPosix"),
        .target(
            name: "StoragePolicy",
            dependencies: ["CYAML", "CPosix"],
            path: "Sources/StoragePolicy"
        ),
        .executableTarget(
            name: "policyctl",
            dependencies: ["StoragePolicy"],
            path: "Sources/policyctl"
        ),
        .testTarget(
            name: "StoragePolicyTests",
            dependencies: ["StoragePolicy"],
            path: "Tests/StoragePolicyTests"
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["StoragePolicy"],
            path: "Tests/EndToEndTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
