// `policyctl demo`: builds a realistic app container in a temporary folder and walks through plan, apply,
// journal and audit on it with the bundled ios-app-sandbox policy. Touches nothing outside that folder.
import StoragePolicy

struct DemoCommand: Command {
    static let summary = CommandSummary(
        name: "demo",
        abstract: "Try policyctl on a generated app container, step by step.",
        discussion: "Builds an iOS-style app container with expired tmp files, download residue, an over-quota thumbnail cache, uppercase names, a stray database and an old trash, then runs plan, apply, journal and audit on it with the bundled ios-app-sandbox policy. The folder is removed afterwards unless --keep is given. With --step the demo stops after the plan and prints the exact apply, journal and undo commands to try by hand; the folder is kept."
    )

    struct Options: ParsableOptions {
        var keep: String?
        var step = false

        static var options: [OptionField<Self>] { [
            .option(\.keep, "keep", value: "dir", help: "Build the demo in this new folder and keep it.", completion: .directory),
            .flag(\.step, "step", help: "Build the container and show the plan, then print the commands to run apply, journal and undo yourself, and stop (the folder is kept)."),
        ] }
    }

    var keep: String?
    var stepByHand: Bool

    init(_ options: Options) {
        keep = options.keep
        stepByHand = options.step
    }

    func run() throws -> ExitCode {
        let base: String
        if let keep {
            guard system_mkdir(keep, 0o755) == 0 else {
                throw CommandFailure(code: .usage, message: "--keep \(keep): \(system_errno); give a folder that does not exist yet")
            }
            base = keep
        } else {
            guard let made = system_mkdtemp("/tmp/policyctl-demo-XXXXXX") else {
                throw CommandFailure(code: .ioError, message: "cannot create a temporary folder: \(system_errno)")
            }
            base = made
        }
        // --step leaves the folder for the commands it prints.
        defer { if keep == nil && !stepByHand { _ = Subprocess.runRemove(base) } }
        let root = base + "/container"
        let policyPath = base + "/ios-app-sandbox.yaml"
        guard system_mkdir(root, 0o755) == 0 else { throw CommandFailure(code: .ioError, message: "cannot create \(root)") }
        let template = Templates.named("ios-app-sandbox")!
        let fd = system_open(policyPath, [.writeOnly, .create, .exclusive, .closeOnExec], 0o644)
        guard fd >= 0 else { throw CommandFailure(code: .ioError, message: "cannot write \(policyPath)") }
        let bytes = Array(template.fileContents.utf8)
        _ = system_write(fd, bytes, bytes.count)
        system_close(fd)

        let handle = try DirectoryHandle.open(root: root)
        let made = try DemoTree(root: handle).build()
        step("1/5", "A demo app container with \(made) files is at \(root), with the policy beside it.")

        let common = ["--policy", policyPath, "--root", root]
        step("2/5", "plan: what the policy would change. Nothing on disk is touched.")
        guard run(["plan"] + common) == 0 else { return .ioError }
        if stepByHand {
            printNextSteps(common: common, root: root, base: base)
            return .success
        }
        step("3/5", "apply: the same changes as one journaled transaction (--yes: no prompt).")
        guard run(["apply"] + common + ["--yes"]) == 0 else { return .rolledBack }
        step("4/5", "journal: what was applied, when, by which policy.")
        _ = run(["journal", "--root", root])
        step("5/5", "audit: what is still wrong. The stray database is audit-only, so a person decides.")
        let audit = run(["audit"] + common)
        Terminal.out("")
        if keep != nil {
            Terminal.out("The demo folder is kept at \(base). Try: policyctl plan --policy \(policyPath) --root \(root)")
        } else {
            Terminal.out("Done; the demo folder was removed. Keep one with: policyctl demo --keep DIR")
        }
        // Audit findings are the demo's expected outcome, not a failure of the demo.
        return audit == 0 || audit == 1 ? .success : .ioError
    }

    /// What `--step` prints instead of running apply: each command exactly as it would run, ready to paste,
    /// under a line saying what it shows. Only undo's transaction id is left to fill in: apply makes it.
    private func printNextSteps(common: [String], root: String, base: String) {
        let command = { (args: [String]) in "  policyctl " + args.map(shellQuoted).joined(separator: " ") }
        Terminal.out("")
        Terminal.out(Terminal.styled("Stopped before apply.", .bold) + " The container and the policy stay in \(base). Run these yourself, in order:")
        let steps: [(String, [String])] = [
            ("carry out the plan as one journaled transaction (it asks first)", ["apply"] + common),
            ("the transaction apply made, with its id", ["journal", "--root", root]),
            ("reverse it, with the id journal printed: renames, trash and markers go back; deletes are listed", ["undo", "--root", root, "ID"]),
            ("what is still wrong", ["audit"] + common),
        ]
        for (what, args) in steps {
            Terminal.out("")
            Terminal.out(Terminal.styled("  # " + what, .dim))
            Terminal.out(command(args))
        }
        Terminal.out("")
        Terminal.out("Remove the folder when done: rm -r " + shellQuoted(base))
    }

    private func step(_ number: String, _ text: String) {
        Terminal.out("")
        Terminal.out(Terminal.styled("[\(number)] ", .bold) + text)
    }

    private func run(_ args: [String]) -> Int32 {
        Terminal.out(Terminal.styled("$ policyctl " + args.map(shellQuoted).joined(separator: " "), .dim))
        return Subprocess.runSelf(args, environment: ["POLICYCTL_DEMO": "1"])
    }

    private func shellQuoted(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:%".contains($0) } ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
