// `policyctl demo`: builds a realistic app container in a temporary folder and walks through plan, apply,
// journal and audit on it with the bundled ios-app-sandbox policy. Touches nothing outside that folder.
import StoragePolicy

struct DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Try policyctl on a generated app container, step by step.",
        discussion: "Builds an iOS-style app container with expired tmp files, download residue, an over-quota thumbnail cache, uppercase names, a stray database and an old trash, then runs plan, apply, journal and audit on it with the bundled ios-app-sandbox policy. The folder is removed afterwards unless --keep is given.",
        options: [
            .option("keep", value: "dir", help: "Build the demo in this new folder and keep it.", completion: .directory),
        ]
    )

    var keep: String?

    init(_ arguments: ParsedArguments) { keep = arguments.value("keep") }

    func run() throws -> ExitCode {
        let base: String
        if let keep {
            guard mkdir(keep, 0o755) == 0 else {
                throw CommandFailure(code: .usage, message: "--keep \(keep): \(Errno(rawValue: errno)); give a folder that does not exist yet")
            }
            base = keep
        } else {
            var template = Array("/tmp/policyctl-demo-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else {
                throw CommandFailure(code: .ioError, message: "cannot create a temporary folder: \(Errno(rawValue: errno))")
            }
            base = String(cString: made)
        }
        defer { if keep == nil { _ = Subprocess.runRemove(base) } }
        let root = base + "/container"
        let policyPath = base + "/ios-app-sandbox.yaml"
        guard mkdir(root, 0o755) == 0 else { throw CommandFailure(code: .ioError, message: "cannot create \(root)") }
        let template = Templates.named("ios-app-sandbox")!
        let fd = open(policyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CommandFailure(code: .ioError, message: "cannot write \(policyPath)") }
        let bytes = Array(template.fileContents.utf8)
        _ = write(fd, bytes, bytes.count)
        close(fd)

        let handle = try DirectoryHandle.open(root: root)
        let made = try DemoTree(root: handle).build()
        step("1/5", "A demo app container with \(made) files is at \(root), with the policy beside it.")

        let common = ["--policy", policyPath, "--root", root]
        step("2/5", "plan: what the policy would change. Nothing on disk is touched.")
        guard run(["plan"] + common) == 0 else { return .ioError }
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
