// `policyctl trash`: the soft delete. Moves items into the policy's trash folder with Finder-style unique
// names and records when, journaled like apply; `--restore` puts them back. Never replaces anything.
import StoragePolicy

struct TrashCommand: Command {
    static let summary = CommandSummary(
        name: "trash",
        abstract: "Move items into the trash folder, recording when; or put them back.",
        discussion: """
            PATHs are relative to the root (or absolute paths under it); one on another volume (a mount inside the \
            root) goes into that volume's trash, $topdir/.Trash/UID or $topdir/.Trash-UID, in a transaction rooted \
            at $topdir, never copied across volumes. Items get Finder-style unique names \
            ('name (2).ext') and a record of when they were trashed, so trash retention measures from that \
            moment: a FreeDesktop info/NAME.trashinfo where the folder has files/ or info/, else xattr stamps \
            (user.policyctl.trashed, user.policyctl.origin), or for a file with several hard links or a symlink \
            (never given an xattr) an entry in the folder's .policyctl-info/ index. The trash folder is the policy's first trash rule's \
            path, or --trash-dir. It is state: one owned by another user or writable by group or others (or whose files/, \
            info/ or index is) is never moved into or restored from, and each such item is skipped naming its owner and mode; \
            a missing one is created mode 0700. --restore takes where an item goes back from this state folder's journal \
            of the move, or a .trashinfo or index entry root or the running user wrote, never from the item's own \
            user.policyctl.origin; it never puts an item into a folder owned by neither root, the running user nor the item's \
            owner; --to puts one item at another path under the root instead, under the same rules. --list prints \
            each item's name, when it was trashed, its size in bytes (a folder's is the sum of its regular files, from \
            a trusted trash's FreeDesktop directorysizes cache while its entry is current) and where it came from; \
            --format json prints them as one JSON object. --empty deletes every item (with --older-than, those \
            trashed longer ago) and its record, dated as trash retention dates them: an item whose date cannot be \
            told is kept and reported. Journaled and rolled back on failure like apply. Exit codes: 0 done, 1 some \
            items were skipped or kept (each reported), 3 failed and rolled back, 64 usage, 74 I/O error.
            """,
        usage: [
            "--root <dir> [--policy <file> | --trash-dir <dir>] [--layout <layout>] <path> ...",
            "--root <dir> [--policy <file> | --trash-dir <dir>] --restore <name> ...",
            "--root <dir> [--policy <file> | --trash-dir <dir>] --restore <name> --to <path>",
            "--root <dir> [--policy <file> | --trash-dir <dir>] --list [--format text|json]",
            "--root <dir> [--policy <file> | --trash-dir <dir>] --empty [--older-than <duration>]",
            "--discover [--format text|json]",
        ]
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var items: [String] = []
        var root: String?
        var policy: String?
        var cacheDir: String?
        var trashDir: String?
        var layout = "auto"
        var restore = false
        var list = false
        var noWait = false
        var stateDir: String?
        var logFormat: String?
        var forceRoot = false
        var discover = false
        var format = "text"
        var to: String?
        var empty = false
        var olderThan: String?

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.items, "path", help: "Items to trash (or, with --restore, names in the trash).", optional: true),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The root the items are under.", completion: .directory),
            .option(\.policy, "policy", short: "p", value: "file", help: "Use this policy's trash folder and layout.", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.trashDir, "trash-dir", value: "dir", help: "The trash folder, relative to the root.", completion: .directory),
            .option(\.layout, "layout", value: "layout", help: "Layout of a trash folder that does not exist yet.", default: "auto",
                    values: ["auto", "freedesktop", "app"]),
            .flag(\.restore, "restore", help: "Put the named items back where they were trashed from, never replacing anything."),
            .option(\.to, "to", value: "path", help: "With --restore of one name: put it at this path under the root instead, never replacing anything.", completion: .file),
            .flag(\.list, "list", help: "List what the trash holds: name, when, size in bytes, original path."),
            .flag(\.empty, "empty", help: "Delete the trash folder's items and their records, journaled like apply."),
            .option(\.olderThan, "older-than", value: "duration", help: "With --empty: only items trashed longer ago than this (7d, 12h...)."),
            .flag(\.noWait, "no-wait", help: "When another run holds the lock, print 'skipped: another run in progress' and exit 0."),
            .shared(\.stateDir, RootSession.stateDirOption),
            .option(\.logFormat, "log-format", value: "format", help: "Log lines for journald and syslog.", values: ["plain", "json"]),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
            .flag(\.discover, "discover", help: "List the FreeDesktop trash folders: the home trash and each mounted volume's .Trash/UID or .Trash-UID (every user's, as root), and each place ignored, with why. Takes no root."),
            .option(\.format, "format", value: "format", help: "Output format of --list and --discover.", default: "text", values: ["text", "json"]),
        ] }
    }

    let root: String
    let policyPath: String?
    let trashDir: String?
    let layout: TrashRetention.Layout
    let restore: Bool
    let list: Bool
    let noWait: Bool
    let stateDir: String?
    let items: [String]
    let log: ApplyLog
    /// `--discover`: list the trash folders the FreeDesktop specification names (TrashDiscoverCommand.swift).
    let discover: Bool
    let json: Bool
    /// `--restore NAME --to PATH`: where the one item goes instead of its origin.
    let restoreTo: String?
    /// `--empty [--older-than D]` (TrashEmptyCommand.swift).
    let empty: Bool
    let olderThan: PolicyDuration?
    /// `--older-than` as typed, for messages.
    let olderThanText: String?

    init(_ options: Options) throws {
        discover = options.discover
        json = options.format == "json"
        if discover {
            // Discovery finds the folders itself: nothing that names one, or a root, goes with it.
            if options.root != nil || options.policy != nil || options.trashDir != nil || options.restore || options.list || options.empty
                || options.to != nil || options.olderThan != nil || !options.items.isEmpty {
                throw UsageError(message: "--discover takes no --root, --policy, --trash-dir, --restore, --list, --empty or paths: it finds the trash folders itself", command: "policyctl trash")
            }
            (restoreTo, empty, olderThan, olderThanText) = (nil, false, nil, nil)
            (root, policyPath, trashDir, layout, restore, list, noWait, stateDir, items) = ("", nil, nil, .automatic, false, false, false, nil, [])
            log = ApplyLog(logFormat: nil, perAction: true)
            return
        }
        if options.format != "text" && !options.list { throw UsageError(message: "--format is for --list and --discover", command: "policyctl trash") }
        let root = try options.required(\.root, command: "policyctl trash")
        try RootSafety.check(root, force: options.forceRoot, command: "policyctl trash")
        self.root = root
        policyPath = try PolicyArgument.resolve(options.policy, useSet: false)
        trashDir = options.trashDir
        layout = TrashRetention.Layout(rawValue: options.layout) ?? .automatic
        restore = options.restore
        list = options.list
        noWait = options.noWait
        stateDir = options.stateDir
        items = options.items
        log = ApplyLog(logFormat: options.logFormat, perAction: true)
        if policyPath != nil && trashDir != nil {
            throw UsageError(message: "Give either --policy or --trash-dir, not both", command: "policyctl trash")
        }
        if policyPath == nil && trashDir == nil {
            throw UsageError(message: "Missing --policy <file> (with a trash rule) or --trash-dir <dir>", command: "policyctl trash")
        }
        empty = options.empty
        restoreTo = options.to
        if [restore, list, empty].filter({ $0 }).count > 1 {
            throw UsageError(message: "Give only one of --restore, --list and --empty", command: "policyctl trash")
        }
        if (list || empty) && !items.isEmpty { throw UsageError(message: "--\(list ? "list" : "empty") takes no paths", command: "policyctl trash") }
        if let to = options.to {
            guard restore, items.count == 1 else { throw UsageError(message: "--to goes with --restore and exactly one name", command: "policyctl trash") }
            if to.isEmpty { throw UsageError(message: "--to needs a path under the root", command: "policyctl trash") }
        }
        olderThanText = options.olderThan
        if let text = options.olderThan {
            guard empty else { throw UsageError(message: "--older-than goes with --empty", command: "policyctl trash") }
            guard let duration = PolicyDuration(parsing: text) else {
                throw UsageError(message: "--older-than '\(text)' is not a duration (such as 7d, 12h, 90m)", command: "policyctl trash")
            }
            olderThan = duration
        } else {
            olderThan = nil
        }
        if !list && !empty && items.isEmpty {
            throw UsageError(message: restore ? "Missing the names to restore" : "Missing expected argument '<path>'", command: "policyctl trash")
        }
    }

    func run() throws -> ExitCode {
        if discover { return try runDiscover() }
        var folderText = trashDir
        var layout = self.layout
        var policyName = "-"
        if let policyPath {
            let policy = try RootSession.loadPolicy(policyPath)
            guard let folder = policy.trashFolder else {
                throw CommandFailure(code: .invalidPolicy, message: "\(policyPath): the policy has no trash rule; pass --trash-dir")
            }
            folderText = folder.string
            policyName = policy.name
            if self.layout == .automatic,
               let t = policy.rules.lazy.compactMap({ if case .trash(let t) = $0.kind { t } else { nil } }).first {
                layout = t.layout
            }
        }
        let session = StorageEngine.Session(root: root, stateDirectory: stateDir, waitForLock: !noWait)
        let printer = ApplyEventPrinter(log: log)
        let rootPath = RootSession.canonical(root)
        guard let folder = relativePath(folderText!, rootPath: rootPath) else {
            throw UsageError(message: "The trash folder '\(folderText!)' is not inside the root", command: "policyctl trash")
        }

        if list { return try runList(folder, layout: layout, session: session, printer: printer) }
        if empty { return try runEmpty(folder, layout: layout, session: session, printer: printer) }

        var paths: [RelativePath] = []
        var names: [FileName] = []
        for text in items {
            if restore {
                guard let name = FileName(text) else { throw UsageError(message: "'\(text)' is not a name in the trash", command: "policyctl trash") }
                names.append(name)
            } else {
                guard let path = relativePath(text, rootPath: rootPath), !path.isRoot else {
                    throw UsageError(message: "'\(text)' is not inside the root \(rootPath)", command: "policyctl trash")
                }
                paths.append(path)
            }
        }

        // Items on another volume than the trash folder go into that volume's trash (TrashVolumeCommand.swift).
        var otherVolumesSkipped = false
        if !restore, let mounts = MountPoints.current() {
            let split = Self.byVolume(paths, folder: folder, rootPath: rootPath, mountPoints: mounts)
            if !split.others.isEmpty {
                paths = split.same
                otherVolumesSkipped = try trashOnOtherVolumes(split.others, policyName: policyName)
                if paths.isEmpty { return otherVolumesSkipped ? .findings : .success }
            }
        }
        var destination: RelativePath? = nil
        if let restoreTo {
            guard let path = relativePath(restoreTo, rootPath: rootPath), !path.isRoot else {
                throw UsageError(message: "--to '\(restoreTo)' is not inside the root \(rootPath)", command: "policyctl trash")
            }
            guard !path.hasPrefix(folder) else {
                throw UsageError(message: "--to '\(PrintableText.escapingControls(restoreTo))' is inside the trash folder \(folder.escaped): an item restored there loses its record and is kept forever, undated; name a folder outside the trash", command: "policyctl trash")
            }
            destination = path
        }
        let report: ApplyReport
        do {
            report = restore
                ? try StorageEngine.restore(names, from: folder, to: destination, layout: layout, policy: policyName, policyPath: policyPath,
                                            session: session, events: printer.render)
                : try StorageEngine.trash(paths, into: folder, layout: layout, policy: policyName, policyPath: policyPath,
                                          session: session, events: printer.render)
        } catch {
            throw try failure(error, printer)
        }
        return report.skipped.isEmpty && !otherVolumesSkipped ? .success : .findings
    }

    /// A file-system error once the root is open is said as is (not "planning failed").
    func failure(_ error: EngineError, _ printer: ApplyEventPrinter) throws -> CommandFailure {
        if case .fileSystem(let e) = error, printer.rootPath != nil { return CommandFailure(code: .ioError, message: "\(e)") }
        return try printer.failure(error, root: root)
    }

    /// A root-relative path from what the user typed: relative to the root, or absolute under it.
    private func relativePath(_ text: String, rootPath: String) -> RelativePath? {
        guard text.hasPrefix("/") else { return RelativePath(text) }
        let prefix = rootPath.hasSuffix("/") ? rootPath : rootPath + "/"
        let absolute = RootSession.canonical(text)
        if absolute == rootPath { return .root }
        // The item itself may be a symlink: resolve only its folder, keep its own name.
        let parentText = String(text[..<(text.lastIndex(of: "/") ?? text.startIndex)])
        let parent = RootSession.canonical(parentText.isEmpty ? "/" : parentText)
        let name = String(text[text.index(after: text.lastIndex(of: "/")!)...])
        let joined = (parent.hasSuffix("/") ? parent : parent + "/") + name
        guard joined.hasPrefix(prefix) else { return nil }
        return RelativePath(String(joined.dropFirst(prefix.count)))
    }
}
