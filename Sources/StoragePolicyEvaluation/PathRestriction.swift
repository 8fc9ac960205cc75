// A plan restricted to named paths (`policyctl audit PATH...`): the walk lists only the directories on the way
// to them and walks only inside the named directories, and the plan keeps only what is at or under a named
// path, plus the layout's findings on the directories on the way. Quota rules are left out: a quota needs its
// whole scope measured, which is exactly the walk a restricted plan does not make.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// Which paths a restricted plan covers.
public struct PathRestriction: Sendable {
    /// The named paths, relative to the root.
    public let paths: Set<RelativePath>
    /// Every proper ancestor of a named path (the root included): listed, never judged.
    let ancestors: Set<RelativePath>

    /// A restriction to `paths`; the root itself among them means the whole tree.
    public init(_ paths: [RelativePath]) {
        self.paths = Set(paths)
        var ancestors = Set<RelativePath>()
        for path in paths {
            var current = path
            while !current.isRoot {
                current = current.parent
                if !ancestors.insert(current).inserted { break }
            }
        }
        self.ancestors = ancestors
    }

    /// True when `path` is a named path or lies under one.
    public func covers(_ path: RelativePath) -> Bool {
        if paths.contains(path) { return true }
        var current = path
        while !current.isRoot {
            current = current.parent
            if paths.contains(current) { return true }
        }
        return false
    }

    /// True when the walk must enter the directory at `path`: on the way to a named path, or under one.
    func enters(_ path: RelativePath) -> Bool { ancestors.contains(path) || covers(path) }

    /// Only what concerns the named paths: actions, skipped entries and findings at or under them, and layout
    /// findings on the directories on the way. Quota findings are dropped (see above).
    package func restrict(_ actions: inout [Action], _ violations: inout [Violation], _ skipped: inout [SkippedEntry],
                  _ notes: inout [String], rules: [Rule]) {
        let quota = Set(rules.filter { if case .quota = $0.kind { true } else { false } }.map(\.name))
        actions = actions.filter { !quota.contains($0.rule) && covers($0.path) }
        violations = violations.filter {
            !quota.contains($0.rule) && (covers($0.path) || (ancestors.contains($0.path) && $0.rule == "layout"))
        }
        skipped = skipped.filter { covers($0.path) }
        if !quota.isEmpty {
            notes.append("quota rules were not checked: a path-scoped audit does not measure their whole scope")
        }
    }
}

/// Wraps the evaluator: every directory it lists is judged as usual, but only the subdirectories on the way to
/// (or under) a named path are entered.
package struct RestrictedVisitor<Inner: WalkVisitor>: WalkVisitor {
    package let inner: Inner
    package let restriction: PathRestriction

    package func makeWorker() -> Inner.Worker { inner.makeWorker() }

    package func visit(_ listing: DirectoryListing, parent: Inner.Directory?, worker: Inner.Worker) -> Inner.Directory {
        let directory = inner.visit(listing, parent: parent, worker: worker)
        if !restriction.covers(listing.path) {
            listing.keepEntered { restriction.enters(listing.path(of: $0)) }
        }
        return directory
    }

    package func couldNotEnter(_ path: RelativePath, because reason: WalkSkipReason, parent: Inner.Directory, worker: Inner.Worker) {
        inner.couldNotEnter(path, because: reason, parent: parent, worker: worker)
    }

    package func finished(_ directory: Inner.Directory, worker: Inner.Worker) { inner.finished(directory, worker: worker) }
}
