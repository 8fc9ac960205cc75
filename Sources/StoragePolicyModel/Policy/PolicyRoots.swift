// `roots:`: one policy over several absolute roots, each with the rules (by name) that apply under it, and
// `trash: { discover: true }`, whose rule runs on every trash folder discovery finds. The engine still plans one
// root: this file holds the list, its checks and the one-root policy each entry becomes; the command layer
// fans out over them (PolicyctlCommands/RootsRun.swift).

@_spi(Layers) import StoragePolicyFileSystem

/// One entry of a policy's `roots:` list: `{ path: /var/tmp, rules: [tmp-expiry, residue] }`.
public struct PolicyRoot: Sendable, Hashable {
    /// The root as written: an absolute path, or `~/...` (expanded from the running user's home, for `--user` runs).
    public var path: String
    /// The names of the rules that apply under this root, paths relative to it.
    public var rules: [String]
    /// Where the entry is written in the policy file, when it came from one.
    public var location: PolicyLocation?
    /// Where each of `rules` is written, in the same order (for unknown-name errors at the name itself).
    package var ruleLocations: [PolicyLocation?] = []

    /// A root entry.
    public init(path: String, rules: [String], location: PolicyLocation? = nil) {
        self.path = path; self.rules = rules; self.location = location
    }

    /// True for `~/...`: the root is under the home of whoever runs policyctl.
    public var isHomeRelative: Bool { path == "~" || path.hasPrefix("~/") }

    /// The absolute root: `~/` expanded against `home` (an absolute path), a trailing slash dropped.
    /// Nil for a home-relative root without a home.
    public func resolved(home: String?) -> String? {
        var text = path
        if isHomeRelative {
            guard let home, home.hasPrefix("/") else { return nil }
            let base = home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
            text = base + String(path.dropFirst(1))
        }
        while text.count > 1 && text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

extension Policy {
    /// True when the policy names its roots itself (`roots:`) or has a `trash: { discover: true }` rule.
    public var hasRoots: Bool { !roots.isEmpty || !discoveringTrash.isEmpty }

    /// Moves the `trash: { discover: true }` rules out of `rules` into `discoveringTrash` (the loader does, once
    /// `extends` is merged): a plan over one root, or a saved plan's validation, must never see a rule whose
    /// scope would be that whole root; only `policy(forDiscoveredTrash:)` makes one, for a trash folder.
    package mutating func separateDiscoveringTrash() {
        discoveringTrash += rules.filter(\.discovers)
        rules.removeAll(where: \.discovers)
    }

    /// The one-root policy for `root`: the rules it names, in policy order, and nothing of `roots:`. Its
    /// name, layout, max-delete and source bytes are the policy's, so a plan made with it is fingerprinted by
    /// the same file; a pressure rule keeps the names it evicts through that this root has.
    public func policy(forRoot root: PolicyRoot) -> Policy {
        var one = self
        let names = Set(root.rules)
        one.rules = rules.filter { names.contains($0.name) }
        one.roots = []
        one.discoveringTrash = []
        // A pressure rule evicts through the named rules this root has; one left with none does nothing here.
        one.pressure = pressure.compactMap { p in
            var kept = p
            kept.evict = p.evict.filter { names.contains($0) }
            return kept.evict.isEmpty ? nil : kept
        }
        return one
    }

    /// The one-root policy for a discovered trash folder: only `rule`, scoped to the root itself (the root is
    /// the trash folder), with no layout and no pressure (they belong to the listed roots).
    public func policy(forDiscoveredTrash rule: Rule) -> Policy {
        var one = self
        var trash = rule
        trash.path = .root
        if case .trash(var t) = trash.kind { t.discover = false; trash.kind = .trash(t) }
        one.rules = [trash]
        one.roots = []
        one.discoveringTrash = []
        one.layout = []
        one.pressure = []
        return one
    }
}

extension Rule {
    /// True for a `trash: { discover: true }` rule.
    public var discovers: Bool { if case .trash(let t) = kind { t.discover } else { false } }
}

/// The checks of `roots:` (PolicyValidator calls them): every path absolute (or `~/`), no root twice, none
/// inside another (their walks would overlap, and two journals would claim the same entries), every named rule
/// defined, and every rule named by some root.
package enum RootChecks {
    package static func validate(_ policy: Policy) -> [Diagnostic] {
        var out: [Diagnostic] = []
        func report(_ severity: Diagnostic.Severity, _ at: PolicyLocation?, _ message: String) {
            out.append(Diagnostic(severity: severity, location: at, message: message))
        }
        let byName = Dictionary((policy.rules + policy.discoveringTrash).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // A discovering rule has left `rules` (separateDiscoveringTrash), so its name is checked here.
        let ruleNames = Set(policy.rules.map(\.name))
        var discoverNames = Set<String>()
        for rule in policy.discoveringTrash {
            if ruleNames.contains(rule.name) || !discoverNames.insert(rule.name).inserted {
                report(.error, rule.location, "duplicate rule name '\(rule.name)'; rule names identify findings and journal entries")
            }
        }
        if policy.discoveringTrash.count > 1, let second = policy.discoveringTrash.dropFirst().first {
            report(.error, second.location, "rule '\(second.name)': a second 'discover: true' trash rule would run on the same trash folders as '\(policy.discoveringTrash[0].name)'; keep one")
        }
        var seen: [(path: String, root: PolicyRoot)] = []
        var named = Set<String>()
        for root in policy.roots {
            let label = "root '\(root.path)'"
            if !(root.path.hasPrefix("/") || root.isHomeRelative) {
                report(.error, root.location, "\(label): a root is an absolute path (or ~/... for --user runs); rule paths are relative to it")
            } else if root.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) {
                report(.error, root.location, "\(label): write the root without '.' or '..' components")
            }
            if root.path.utf8.contains(0) { report(.error, root.location, "\(label): a root path cannot hold NUL") }
            // Compared as written with `~` kept: `~/x` and `/home/me/x` meet only at run time (checked there).
            let key = root.resolved(home: "~") ?? root.path
            if let first = seen.first(where: { $0.path == key }) {
                let at = first.root.location.map { " (first listed at \($0.line):\($0.column))" } ?? ""
                report(.error, root.location, "\(label) is listed twice\(at); list each root once with all its rules")
            } else if let outer = seen.first(where: { RootChecks.nests($0.path, key) }) {
                let (inner, container) = key.count > outer.path.count ? (key, outer.path) : (outer.path, key)
                report(.error, root.location, "roots '\(container)' and '\(inner)' nest: the walk of one would cover the other; list the outer root and give its rules paths below it")
            }
            seen.append((key, root))
            if root.rules.isEmpty { report(.error, root.location, "\(label): no rules; name the rules that apply under it (rules: [NAME, ...])") }
            var ownNames = Set<String>()
            for (i, name) in root.rules.enumerated() {
                let at = i < root.ruleLocations.count ? root.ruleLocations[i] ?? root.location : root.location
                if !ownNames.insert(name).inserted { report(.error, at, "\(label): rule '\(name)' is named twice"); continue }
                guard let rule = byName[name] else {
                    let hint = Suggestion.closest(to: name, in: Array(byName.keys).sorted()).map { " (did you mean '\($0)'?)" } ?? ""
                    report(.error, at, "\(label): no rule is named '\(name)'\(hint)")
                    continue
                }
                if rule.discovers {
                    report(.error, at, "\(label): rule '\(name)' has 'discover: true', so it runs on the trash folders discovery finds; it is named by no root")
                }
                named.insert(name)
            }
        }
        guard !policy.roots.isEmpty else { return out }
        // An error, not a warning: with `roots:` a rule no root names never runs anywhere, which is a typo
        // (a misspelt name in a list) far more often than an intent; `enabled: false` says "not here" plainly.
        for rule in policy.rules where !named.contains(rule.name) {
            report(.error, rule.location, "rule '\(rule.name)' is named by no root in 'roots:', so it would never run; add it to a root's rules (or write enabled: false)")
        }
        return out
    }

    /// True when one of two root paths (absolute, no trailing slash) is inside the other.
    package static func nests(_ a: String, _ b: String) -> Bool {
        func inside(_ x: String, _ y: String) -> Bool { y == "/" ? x != "/" : x.hasPrefix(y + "/") }
        return inside(a, b) || inside(b, a)
    }

    /// The folder name a root's state takes under `--state-dir DIR`: the path escaped as `systemd-escape --path`
    /// does (`/var/tmp` is `var-tmp`, `-` is `\x2d`), so two roots never share a folder and the name says
    /// which root it is.
    package static func stateFolderName(_ absolute: String) -> String {
        let trimmed = absolute.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        if trimmed.isEmpty { return "-" }
        var out = ""
        for (i, byte) in trimmed.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "/"): out += "-"
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: ".") where i > 0: out += "."
            default:
                let hex = String(byte, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            }
        }
        // A name longer than a folder name may be (NAME_MAX, 255 bytes): its start and the path's SHA-256, still
        // one name per path (a path of control bytes escapes to four bytes each).
        if out.utf8.count > 200 {
            out = String(out.prefix(120)) + "-" + SHA256.hex(Array(trimmed.utf8))
        }
        return out
    }
}
