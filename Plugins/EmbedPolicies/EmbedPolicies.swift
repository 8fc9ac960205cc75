// Embeds the reference policies of Policies/*.yaml into the StoragePolicy module at build time, so the YAML in
// Policies/ is the only copy (`init`, `demo` and `extends: [NAME]` need no source tree). The build runs
// EmbedPoliciesTool over the files and compiles what it writes, BundledPolicyTexts.swift, with the module.
import Foundation
import PackagePlugin

@main
struct EmbedPolicies: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "Policies")
        // Listed at every build, so a policy added to Policies/ is embedded without touching the manifest.
        let policies = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "yaml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "BundledPolicyTexts.swift")
        return [.buildCommand(
            displayName: "Embedding \(policies.count) policies from Policies/",
            executable: try context.tool(named: "EmbedPoliciesTool").url,
            arguments: [output.path] + policies.map(\.path),
            inputFiles: policies,
            outputFiles: [output]
        )]
    }
}
