// Example: a policy written in Swift with custom rules (zero-byte files, images without a thumbnail),
// planned against ROOT and printed. Usage: CustomRuleExample ROOT [--apply]; changes nothing without --apply.
import StoragePolicy
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let root = arguments.first else {
    print("usage: CustomRuleExample ROOT [--apply]")
    exit(64)
}
// With --apply the plan is also applied: custom rules' actions go through the same journal as built-in ones.
let applying = arguments.dropFirst().contains("--apply")

do {
    let policy = try Policy("custom-rule-example") {
        LayoutDirectory("Media")
        Rule.expire("tmp-expiry", in: "tmp", after: .hours(24))
        // A struct rule with a parameter...
        Rule.custom("zero-byte-files", in: "Documents", ZeroByteFiles(olderThan: .hours(1)))
        // ...and a closure rule: every photo needs `NAME.thumb.jpg` beside it.
        Rule.custom("images-need-thumbnails", in: "Media", summary: "Every image has a NAME.thumb.jpg beside it.") { entry in
            let name = entry.name.escaped
            guard !name.contains(".thumb."), let dot = name.lastIndex(of: ".") else { return [] }
            let thumbnail = String(name[..<dot]) + ".thumb.jpg"
            return entry.hasSibling(named: thumbnail) ? [] : [.violation("no thumbnail '\(thumbnail)'")]
        }
        .matching("**/*.jpg", "**/*.png", "**/*.heic")
        .type(.file)
    }
    let engine = StorageEngine(policy: policy, root: root)
    let plan = try engine.plan()
    PlanRenderer(ruleOrder: policy.rules.map(\.name)).render(plan) { print($0, terminator: "") }
    if applying {
        let result = try engine.apply(plan)
        print("applied \(result.report.done) change(s) in transaction \(result.transaction ?? "-")")
    }
} catch EngineError.apply(.rolledBack(let transaction, let cause, let undone, let kept)) {
    print("apply failed and was rolled back (transaction \(transaction), \(undone) change(s) undone, \(kept.count) kept): \(cause)")
    exit(3)
} catch {
    print("error: \(error)")
    exit(1)
}
