// Helpers that keep evaluator tests short: rules built in Swift, a plan for a Tree, and plans flattened
// into lines ("delete tmp/a.dat") that a test compares with what it expects. No engine logic here.
import StoragePolicy

public func path(_ s: String) -> RelativePath { RelativePath(s)! }

public func globs(_ patterns: [String]) -> [Glob] { patterns.map { try! Glob($0) } }

public func rule(_ name: String, _ scope: String, _ kind: Rule.Kind, match: [String] = [], exclude: [String] = [],
          type: EntryTypeFilter? = nil, mode: Rule.Mode = .enforce) -> Rule {
    Rule(name: name, path: path(scope), match: globs(match), exclude: globs(exclude), type: type, mode: mode, kind: kind)
}

public func expire(_ after: PolicyDuration, by: Expire.Timestamp = .mtime) -> Rule.Kind { .expire(Expire(after: after, by: by)) }

public func plan(_ tree: Tree, _ rules: [Rule], layout: [LayoutEntry] = [], threads: Int = 2, budget: Int? = nil,
          now: Int64? = nil) throws -> Plan {
    let policy = Policy(name: "test", layout: layout, rules: rules)
    var options = tree.options(threads: threads, budget: budget)
    if let now { options.now = now }
    return try Planner(policy: policy, root: tree.root, options: options).plan()
}

extension Action {
    /// `delete tmp/a.dat`, `rename A.txt -> a.txt`, `trash x -> .Trash/x`, `setxattr d user.x`, ...
    public var line: String {
        switch kind {
        case .rename(let to), .trash(let to): "\(kind.name) \(path.escaped) -> \(to.escaped)"
        case .setxattr(let name, _): "setxattr \(path.escaped) \(name)"
        default: "\(kind.name) \(path.escaped)"
        }
    }
}

extension Plan {
    public var lines: [String] { actions.map(\.line) }
    /// `rule: path: message` for each violation.
    public var findings: [String] { violations.map { "\($0.rule): \($0.path.escaped): \($0.message)" } }
    public var skippedLines: [String] { skipped.map { "\($0.path.escaped): \($0.reason)" } }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Allocated bytes of `relative` in `tree`, as `du` counts them (lstat st_blocks * 512): read by the test
/// itself so expected sizes do not depend on the file system's block size.
public func allocated(_ tree: Tree, _ relative: String) -> Int64 {
    var s = stat()
    guard lstat(tree.root + "/" + relative, &s) == 0 else { return -1 }
    return Int64(s.st_blocks) * 512
}
