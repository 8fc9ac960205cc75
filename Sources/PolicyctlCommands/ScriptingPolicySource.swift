// Where every command resolves a policy path: a YAML file is loaded; a `.swift` file is the policy compiled
// into this program (see ScriptingEntry), checked to be that very script by the SHA-256 of its bytes.
// The script's bytes become the policy's fingerprint bytes: the plan records their SHA-256.
import StoragePolicy

enum PolicySource {
    /// True for a path naming a Swift policy.
    static func isScript(_ path: String) -> Bool { path.hasSuffix(".swift") }

    /// The policy at `path`: loaded from YAML, or the compiled-in Swift policy when `path` is its script.
    static func load(_ path: String, confinedTo folder: String? = nil) throws(PolicyLoadError) -> LoadedPolicy {
        if path == PolicyArgument.dropInSet { return try PolicyArgument.loadSet() }
        guard isScript(path) else { return try PolicyLoader.load(contentsOf: path, confinedTo: folder) }
        return LoadedPolicy(policy: try scriptPolicy(path), warnings: [])
    }

    /// The compiled-in policy, when `path` (a saved plan's policy file) is a Swift policy; nil for YAML.
    static func compiledPolicy(for path: String?) throws(PolicyLoadError) -> Policy? {
        guard let path, isScript(path) else { return nil }
        return try scriptPolicy(path)
    }

    private static func scriptPolicy(_ path: String) throws(PolicyLoadError) -> Policy {
        func failure(_ message: String, io: Bool = false) -> PolicyLoadError {
            PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil, message: message)], isIOError: io)
        }
        guard let context = ScriptContext.current else {
            // policyctl itself compiles a .swift policy and runs it (ScriptingLauncher); reaching here means
            // a program linking PolicyctlCommands was handed a script it was not built from.
            throw failure("\(path): a Swift policy runs through 'policyctl', which compiles it (see Docs/scripting.md)")
        }
        let bytes: [UInt8]
        do { bytes = try PlanFile.read(path: path, limit: PolicyLoader.maximumFileSize) } catch {
            throw failure("cannot read policy '\(path)': \(error.errno)", io: true)
        }
        guard SHA256.hex(bytes) == context.identity.sha256 else {
            throw failure("\(path): not the script this program was compiled from (it changed since, or it is another file); run it with policyctl again")
        }
        var policy: Policy
        do { policy = try context.build() } catch let error as PolicyLoadError {
            throw error
        } catch {
            throw failure("\(path): the policy could not be built: \(error)")
        }
        policy.source = PolicyLocation(file: RootSession.absolute(path), line: 1, column: 1)
        policy.sourceBytes = bytes
        return policy
    }
}
