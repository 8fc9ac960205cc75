// swift-tools-version:6.0
// policyctl: a storage-policy and maintenance engine. A thin executable over the StoragePolicy library;
// no outside Swift packages, only the toolchain and Debian's libyaml.
import PackageDescription

let faultInjection: [SwiftSetting] = [.define("POLICYCTL_FAULT_INJECTION", .when(configuration: .debug))]

let package = Package(
    name: "policyctl",
    // macOS 15 / iOS 18: the engine uses the standard library's Synchronization (Mutex, Atomic); Docs/library.md.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StoragePolicy", targets: ["StoragePolicy"]),
        .executable(name: "policyctl", targets: ["policyctl"]),
        // The command layer (argument parsing, commands, renderers): what `policyctl` runs, and what a
        // compiled Swift policy can link to run the same command code.
        .library(name: "PolicyctlCommands", targets: ["PolicyctlCommands"]),
        // What a compiled Swift policy (`policyctl plan --policy cleanup.swift`) links: the library and the
        // command layer as one shared object, libPolicyctlScripting.so, with their modules (Docs/scripting.md).
        .library(name: "PolicyctlScripting", type: .dynamic, targets: ["StoragePolicy", "PolicyctlCommands"]),
    ],
    targets: [
        .systemLibrary(
            name: "CYAML",
            path: "Sources/CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // zlib for the journal's gzip history files (Gzip.c): on every Debian (zlib1g) and Apple system.
        .target(name: "CPosix", path: "Sources/CPosix", linkerSettings: [.linkedLibrary("z")]),
        // The library in layers, one target each, bottom to top; a target sees only the ones below it, so an edge
        // going up is a compile error (Docs/architecture.md). Across layers, names are `package`; apps see `public`.
        // The fault-injection seam exists in debug builds (what the tests run) and never in what ships.
        .target(
            name: "StoragePolicyFileSystem",    // Platform/ (system calls, /proc), Base/ (bytes, locks, pool), FileSystem/
            dependencies: ["CPosix"],
            swiftSettings: faultInjection
        ),
        .target(
            name: "StoragePolicyModel",         // YAML/ (the libyaml reader) and Policy/ (the policy language)
            dependencies: ["CYAML", "StoragePolicyFileSystem"],
            swiftSettings: faultInjection,
            plugins: ["EmbedPolicies"]
        ),
        .target(name: "StoragePolicyPlan", dependencies: ["StoragePolicyModel"], swiftSettings: faultInjection),
        .target(name: "StoragePolicyEvaluation", dependencies: ["StoragePolicyPlan"], swiftSettings: faultInjection),
        .target(name: "StoragePolicyApply", dependencies: ["StoragePolicyEvaluation"], swiftSettings: faultInjection),
        .target(
            name: "StoragePolicyReports",       // Reports/ (audit formats) and Scheduling/ (timer files)
            dependencies: ["StoragePolicyApply"],
            swiftSettings: faultInjection
        ),
        // The front door: the engine an app calls, re-exporting the public types of the layers below.
        .target(
            name: "StoragePolicy",
            dependencies: ["StoragePolicyReports"],
            path: "Sources/StoragePolicy",
            swiftSettings: faultInjection
        ),
        // The reference policies in Policies/*.yaml are compiled into StoragePolicy (BundledPolicies) at build
        // time, so the YAML there is the only copy: the plugin runs the tool, which writes them as Swift literals.
        .plugin(name: "EmbedPolicies", capability: .buildTool(), dependencies: ["EmbedPoliciesTool"], path: "Plugins/EmbedPolicies"),
        .executableTarget(name: "EmbedPoliciesTool", path: "Plugins/EmbedPoliciesTool"),
        .target(
            name: "PolicyctlCommands",
            dependencies: ["StoragePolicy"],
            path: "Sources/PolicyctlCommands"
        ),
        // main.swift only: one call into PolicyctlCommands.
        .executableTarget(
            name: "policyctl",
            dependencies: ["PolicyctlCommands"],
            path: "Sources/policyctl"
        ),
        // Examples of the library in use; each takes the root directory as its first argument.
        .executableTarget(name: "LaunchCleanup", dependencies: ["StoragePolicy"], path: "Examples/LaunchCleanup"),
        .executableTarget(name: "CustomRuleExample", dependencies: ["StoragePolicy"], path: "Examples/CustomRuleExample"),
        // The app's day (Docs/library.md): launch look, BGProcessingTask apply with progress and expiry.
        .executableTarget(name: "AppDay", dependencies: ["StoragePolicy"], path: "Examples/AppDay"),
        // Temporary trees built with a result builder, manifests and plan helpers, shared by both test targets.
        .target(
            name: "TreeFixture",
            dependencies: ["StoragePolicy", "CPosix"],
            path: "Tests/StoragePolicyTests/Support"
        ),
        .testTarget(
            name: "StoragePolicyTests",
            dependencies: ["StoragePolicy", "TreeFixture"],
            path: "Tests/StoragePolicyTests",
            exclude: ["Support"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["StoragePolicy", "TreeFixture"],
            path: "Tests/EndToEndTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
