// naming: names with uppercase letters are renamed to their lowercase form (a free numbered one when taken),
// names not matching `pattern` are reported. Decided per directory during the walk; a pattern is never fixed.

/// The naming rule kind.
struct NamingKind: RuleKindBehavior {
    static let keyword = "naming"
    let naming: Naming

    init(_ naming: Naming) { self.naming = naming }
}
