#!/bin/sh
# Benchmarks/one-module.sh OUT: this checkout's library built as one module in OUT (a package of its own), for
# instruction comparisons with the layered build (Docs/performance.md, "The layers as targets"): every layer's files
# in one target, the imports of one layer by another dropped. Prints the release binary's path.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd); D=${1:?usage: one-module.sh OUT}; mkdir -p "$D"
rm -rf $D/Sources $D/Plugins $D/Policies; mkdir -p $D/Sources/StoragePolicy
cp -r $SRC/Sources/CYAML $SRC/Sources/CPosix $SRC/Sources/PolicyctlCommands $SRC/Sources/policyctl $D/Sources/
# The command layer's SPI imports of a layer become the one module's.
sed -i -E 's/^@_spi\(Layers\) import StoragePolicy[A-Za-z]+$/@_spi(Layers) import StoragePolicy/' $D/Sources/PolicyctlCommands/*.swift
cp -r $SRC/Plugins $SRC/Policies $D/
find $SRC/Sources -path "$SRC/Sources/StoragePolicy*" -name '*.swift' | while read -r f; do
  rel=${f#$SRC/Sources/}
  sed -E '/^(@_exported )?(@_spi\(Layers\) )?(@testable )?(package |internal |public )?import StoragePolicy/d' "$f" > "$D/Sources/StoragePolicy/$(echo "$rel" | tr / _)"
done
cat > $D/Package.swift <<'P'
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "policyctl",
    platforms: [.macOS(.v15), .iOS(.v18)],
    targets: [
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1"),
        .target(name: "CPosix", path: "Sources/CPosix"),
        .target(name: "StoragePolicy", dependencies: ["CYAML", "CPosix"], path: "Sources/StoragePolicy", plugins: ["EmbedPolicies"]),
        .plugin(name: "EmbedPolicies", capability: .buildTool(), dependencies: ["EmbedPoliciesTool"], path: "Plugins/EmbedPolicies"),
        .executableTarget(name: "EmbedPoliciesTool", path: "Plugins/EmbedPoliciesTool"),
        .target(name: "PolicyctlCommands", dependencies: ["StoragePolicy"], path: "Sources/PolicyctlCommands"),
        .executableTarget(name: "policyctl", dependencies: ["PolicyctlCommands"], path: "Sources/policyctl"),
    ],
    swiftLanguageModes: [.v6]
)
P
(cd "$D" && swift build -c release --product policyctl >&2 && echo "$D/.build/release/policyctl")
