// custom: a rule written in Swift (CustomRule) judges each selected entry during the walk; its verdicts are
// limited to what apply can undo. The YAML decoder never produces one.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The custom rule kind.
package struct CustomKind: RuleKindBehavior {
    package static let keyword = CustomSyntax.keyword
    let custom: AnyCustomRule

    package init(_ custom: AnyCustomRule) { self.custom = custom }

    package func makeJudge() -> any EntryJudge { CustomJudge(custom) }

    /// A custom rule deletes files, renames within a directory and sets user attributes, on what it selects.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        let path = action.path
        switch action.kind {
        case .setxattr(let name, _):
            // A custom rule may set its own attributes, but only in the user namespace: security.*, trusted.*
            // and system.* change what the kernel lets a file do.
            guard name == plan.marker.name || name.hasPrefix("user.") else {
                return "custom rules set attributes in the user. namespace only, not \(PrintableText.escapingControls(name))"
            }
            return plan.selection(action, rule)
        case .delete:
            if let why = plan.structureProblem(path) { return why }
            if action.type == .directory { return "custom rules cannot delete directories" }
            return plan.selection(action, rule)
        case .rename(let to):
            if let why = plan.structureProblem(path) { return why }
            if let why = plan.selection(action, rule) { return why }
            guard to.parent == path.parent, to != path else { return "a custom rule renames within the same directory" }
            return (to.lastComponent?.bytes.count ?? 0) <= NameRules.nameMax ? nil : "its target name is longer than \(NameRules.nameMax) bytes"
        default:
            return plan.refusal(action, rule)
        }
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        ["judged by a custom rule: \(custom.summary)\(entry.consequence)"]
    }

    package func summary(of rule: Rule, scope: String) -> String { custom.summary }

    package func help(for rule: Rule) -> String {
        rule.mode == .audit
            ? "A rule written in Swift reported this entry; fix it, or adjust the rule."
            : "A rule written in Swift plans this change; `apply` makes it through the journal like any other."
    }
}

/// The walk's side of custom rules: the rule asked about every selected entry.
package final class CustomJudge: EntryJudge {
    let custom: AnyCustomRule

    package init(_ custom: AnyCustomRule) { self.custom = custom }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        guard view.rule.admits(type), view.rule.selects(view.directory, name) else { return }
        e.judgeCustom(custom, view.rule, listing, i, type: type, worker: worker)
    }
}
