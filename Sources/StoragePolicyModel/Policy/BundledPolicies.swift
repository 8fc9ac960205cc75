// The reference policies of Policies/, embedded so `init`, `demo` and `extends: [NAME]` work without the
// source tree. The texts are Policies/*.yaml themselves, compiled in at build time by the EmbedPolicies plugin
// (Plugins/EmbedPolicies: it writes `BundledPolicies.embedded`); Policies/ is the only copy.

/// The reference policies bundled with policyctl: what `init --list` shows and `extends:` names resolve to.
public enum BundledPolicies {
    /// One bundled policy.
    public struct Template: Sendable {
        /// The name `init --template` and `extends:` use (the file name without `.yaml`).
        public var name: String
        /// The policy's `description:`.
        public var description: String
        /// The policy's YAML: the file in Policies/ without its final newline.
        public var text: String
        /// The file itself: `text` and the final newline the string literal leaves out.
        public var fileContents: String { text + "\n" }
    }

    /// Every bundled policy, by name.
    public static let all: [Template] = embedded.map { Template(name: $0.name, description: $0.description, text: $0.text) }

    /// The bundled policy called `name`, if there is one.
    public static func named(_ name: String) -> Template? { all.first { $0.name == name } }
}
