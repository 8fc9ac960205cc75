// custom: a rule written in Swift (CustomRule) judges each selected entry during the walk; its verdicts are
// limited to what apply can undo. The YAML decoder never produces one.

/// The custom rule kind.
struct CustomKind: RuleKindBehavior {
    static let keyword = "custom"
    let custom: AnyCustomRule

    init(_ custom: AnyCustomRule) { self.custom = custom }

    func makeJudge() -> EntryJudge { CustomJudge(custom) }

    func explain(_ entry: ExplainedEntry) -> [String] {
        ["judged by a custom rule: \(custom.summary)\(entry.consequence)"]
    }

    func summary(of rule: Rule, scope: String) -> String { custom.summary }

    func help(for rule: Rule) -> String {
        rule.mode == .audit
            ? "A rule written in Swift reported this entry; fix it, or adjust the rule."
            : "A rule written in Swift plans this change; `apply` makes it through the journal like any other."
    }
}

/// The walk's side of custom rules: the rule asked about every selected entry.
final class CustomJudge: EntryJudge, @unchecked Sendable {
    let custom: AnyCustomRule

    init(_ custom: AnyCustomRule) { self.custom = custom }

    override func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        guard view.rule.admits(type), view.rule.selects(view.directory, name) else { return }
        e.judgeCustom(custom, view.rule, listing, i, type: type, worker: worker)
    }
}
