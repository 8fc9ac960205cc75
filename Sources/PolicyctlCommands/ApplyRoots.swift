// `policyctl apply` over a policy that lists its roots (or discovers trash folders): one transaction per root,
// each under that root's own lock and journal (RootsRun), one after another. A root that fails is named and the
// next one still applied; the exit code is the worst of them. A signal stops the whole run.
import StoragePolicy

extension ApplyCommand {
    func applySeveral(_ targets: [RootTarget]) throws -> ExitCode {
        if metricsFile != nil {
            throw UsageError(message: "--metrics-file writes the metrics of one root: with a policy that lists its roots, add --root naming one of them", command: "policyctl apply")
        }
        var codes: [ExitCode] = []
        var failed: [String] = []
        var newStateFolders = 0
        for (i, target) in targets.enumerated() {
            if target.discovered && !RootsRun.stateFolderExists(target.stateDirectory) {
                // Bounded per run: a volume a co-tenant filled with trash folders costs a state folder each.
                guard newStateFolders < RootsRun.newTrashStateFoldersPerRun else {
                    Terminal.err("note: \(PrintableText.escapingControls(target.path)): not run: this run made \(RootsRun.newTrashStateFoldersPerRun) new state folders for discovered trash folders, the most one run makes; a later run takes it")
                    codes.append(.findings)
                    continue
                }
                newStateFolders += 1
            }
            switch log.format {
            case .json:
                Terminal.out(bytes: JSONLogLine([("event", .string("root")), ("root", .string(target.path)), ("written", .string(target.written)),
                                                 ("origin", .string(target.discovered ? "discovered-trash" : "listed"))]).bytes + [0x0A])
            case .plain: Terminal.out("root: \(PrintableText.escapingControls(target.path))")
            case .human: if !log.quiet { Terminal.out(RootsRun.header(target, index: i, count: targets.count)) }
            }
            do {
                codes.append(try executeListed(ApplyRequest(root: target.path, source: .policy(target.policy)), stateDirectory: target.stateDirectory))
            } catch {
                // SIGINT/SIGTERM: the root under way stopped cleanly; the roots after it are not started.
                if SignalCancellation().flag.isCancelled { throw error }
                let (code, message) = RootsRun.message(error)
                codes.append(code)
                guard code != .success else { continue }   // skipped for the lock (--no-wait): said already
                failed.append("\(PrintableText.escapingControls(target.path)) (exit \(code.rawValue))")
                Terminal.err("error: " + RootsRun.failed(target, message.isEmpty ? "exit \(code.rawValue), said above" : message))
            }
        }
        if targets.isEmpty && !log.quiet { Terminal.out("No roots to apply: the policy lists none and discovery found no trash folder.") }
        if !failed.isEmpty {
            Terminal.err("\(failed.count) of \(targets.count) roots failed: \(failed.joined(separator: ", ")); the others were applied")
        }
        return RootsRun.worst(codes)
    }

    /// One root of a roots policy (listed or discovered), a full run's or the one `--root` selects, a saved plan's
    /// too: run under its own state folder, whose parents are made here (never by plan, audit or explain).
    func executeListed(_ request: ApplyRequest, stateDirectory: String?) throws -> ExitCode {
        RootsRun.makeFolders(above: stateDirectory)
        return try execute(request, stateDirectory: stateDirectory)
    }

    /// A saved plan of a policy with roots: is judged by the rules of the root it is applied to, not by every
    /// root's (a plan file may be forged: an action of another root's rule must be refused here), and applied
    /// under that root's state folder (`--state-dir DIR/NAME`), the lock a full run over every root takes.
    /// The policy is handed to the engine as the one it checks the plan against, with the file's bytes, so
    /// staleness is still judged by them. Nil for a policy without roots (the engine reads and judges the file
    /// itself, as before).
    static func rootsPolicy(_ path: String, root: String, stateDir: String?) throws -> (policy: Policy, stateDirectory: String?)? {
        guard !PolicySource.isScript(path), let loaded = try? PolicySource.load(PathNormalization.absolute(path)),
              loaded.policy.hasRoots else { return nil }
        guard case .single(let one, _, let state) = try RootsRun.select(loaded.policy, root: root, stateDir: stateDir, user: true,
                                                                      command: "policyctl apply") else { return nil }
        return (one, state)
    }
}
