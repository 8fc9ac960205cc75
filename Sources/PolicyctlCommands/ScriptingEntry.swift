// The entry point of a compiled Swift policy (`policyctl plan --policy cleanup.swift`): the same command
// code as `policyctl`, with `--policy cleanup.swift` resolved to the policy compiled in. The policy's
// fingerprint is the SHA-256 of the script's bytes, so editing the script makes a saved plan stale.
import StoragePolicy

/// Which script a compiled policy was built from: the SHA-256 of its bytes, as policyctl read them.
public struct ScriptIdentity: Sendable, Hashable {
    /// Lowercase hex SHA-256 of the script's bytes.
    public var sha256: String
    /// The identity of a script with these bytes' SHA-256.
    public init(sha256: String) { self.sha256 = sha256 }
}

extension Policyctl {
    /// Runs `argv` as `policyctl` does, inside a compiled Swift policy: a `--policy` naming the script (the
    /// file whose bytes hash to `script.sha256`) is `scriptPolicy`; any other `.swift` file is refused.
    /// What the generated entry point of a `.swift` policy calls (Docs/scripting.md).
    public static func main(_ argv: [String] = CommandLine.arguments, scriptPolicy: Policy, script: ScriptIdentity) -> Int32 {
        ScriptContext.current = ScriptContext(identity: script, build: { scriptPolicy })
        return main(argv)
    }

    /// The same, for a script that declares `func policy() throws -> Policy`: a policy that fails its
    /// checks is reported like an invalid YAML policy (every diagnostic, exit 65) instead of stopping the
    /// program at the top level.
    public static func main(_ argv: [String] = CommandLine.arguments, scriptPolicy: @escaping () throws -> Policy,
                            script: ScriptIdentity) -> Int32 {
        ScriptContext.current = ScriptContext(identity: script, build: scriptPolicy)
        return main(argv)
    }
}

/// Set once, before any command runs, by the compiled policy's entry point; nil in `policyctl` itself.
struct ScriptContext {
    var identity: ScriptIdentity
    var build: () throws -> Policy

    nonisolated(unsafe) static var current: ScriptContext?
}
