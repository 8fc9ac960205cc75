// custom: a rule written in Swift (CustomRule) judges each selected entry during the walk; its verdicts are
// limited to what apply can undo. The YAML decoder never produces one.

/// The custom rule kind.
struct CustomKind: RuleKindBehavior {
    static let keyword = "custom"
    let custom: AnyCustomRule

    init(_ custom: AnyCustomRule) { self.custom = custom }
}
