// Example: a policy written in Swift with custom rules (zero-byte files, images without a thumbnail),
// planned against ROOT and printed. Usage: CustomRuleExample ROOT; plans only, never changes anything.
import StoragePolicy
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

guard let root = CommandLine.arguments.dropFirst().first else {
    print("usage: CustomRuleExample ROOT")
    exit(64)
}

do {
    let policy = try Policy("custom-rule-example") {
        Layout("Media")
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
    let plan = try StorageEngine(policy: policy, root: root).plan()
    PlanRenderer(ruleOrder: policy.rules.map(\.name)).render(plan) { print($0, terminator: "") }
} catch {
    print("error: \(error)")
    exit(1)
}
