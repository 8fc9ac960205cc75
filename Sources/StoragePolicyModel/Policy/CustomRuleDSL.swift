// The DSL's words for custom rules: `Rule.custom("name", in: "scope", SomeRule())` or with a closure.
// Like every component, it only describes; `Policy(_:content:)` checks the scope and globs.

extension Rule {
    /// A rule written in Swift, judging every entry in `path` that the rule's `matching`, `excluding`
    /// and `type` select (files, directories and symlinks by default).
    ///
    /// ```swift
    /// Rule.custom("empty-files", in: "tmp", EmptyFiles()).matching("**/*.dat")
    /// ```
    public static func custom(_ name: String, in path: String, _ rule: some CustomRule) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.custom(AnyCustomRule(rule))))
    }

    /// A rule written as a closure, described in reports by `summary`.
    ///
    /// ```swift
    /// Rule.custom("empty-files", in: "tmp", summary: "No empty files.") { entry in
    ///     entry.size == 0 ? [.delete(reason: "zero bytes")] : []
    /// }
    /// ```
    public static func custom(_ name: String, in path: String, summary: String,
                              _ evaluate: @escaping @Sendable (CustomRuleEntry) -> [CustomRuleVerdict]) -> RuleDraft {
        custom(name, in: path, ClosureCustomRule(summary: summary, evaluate))
    }
}
