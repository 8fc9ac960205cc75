// Example: an app's day with the storage policy (Docs/library.md, "The app's day"). At launch, off the main
// actor and briefly: recovery of an interrupted run and a look at what is pending. Later, in a background
// processing task: the whole apply, progress from the event stream, cancelled by the task's expiration handler.
// On Apple platforms the task is a real BGProcessingTask (BackgroundScheduler.swift); on Linux a stand-in runs
// the same code so CI can. Usage: AppDay ROOT [--expire-after MS]; never touches anything outside ROOT.
import Foundation
import StoragePolicy

@main
struct AppDay {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var expireAfter: Duration? = nil
        if let i = arguments.firstIndex(of: "--expire-after"), i + 1 < arguments.count, let ms = Int(arguments[i + 1]) {
            expireAfter = .milliseconds(ms)
            arguments.removeSubrange(i...(i + 1))
        }
        guard let root = arguments.first else {
            FileHandle.standardError.write(Data("usage: AppDay ROOT [--expire-after MS]\n".utf8))
            exit(64)
        }
        let container = URL(fileURLWithPath: root, isDirectory: true)
        do {
            let storage = try ContainerStorage(container: container)
            await storage.atLaunch()
            let task = BackgroundTask(expiringAfter: expireAfter)
            let outcome = await storage.inBackground(task)
            print("background: \(outcome)")
        } catch {
            // An EngineError is a LocalizedError: the same line policyctl would print.
            FileHandle.standardError.write(Data("\(error.localizedDescription)\n".utf8))
            exit(65)
        }
    }
}

/// The app's storage policy over its container: the bundled app-sandbox policy, as an app ships it.
struct ContainerStorage: Sendable {
    let engine: StorageEngine

    init(container: URL) throws {
        // The library carries the reference policies byte for byte; an app may ship its own YAML instead.
        guard let bundled = BundledPolicies.named("ios-app-sandbox") else { throw CocoaError(.fileNoSuchFile) }
        var engine = try StorageEngine(yaml: bundled.fileContents, file: "ios-app-sandbox.yaml",
                                       root: container.path(percentEncoded: false))
        // At launch and in the background alike: never queue behind another run; skip this time instead.
        engine.waitForLock = false
        self.engine = engine
    }

    /// At launch: finish whatever a crash interrupted and say what is pending, off the main actor (the engine's
    /// async calls run on threads of its own) and never for long: a second at most, then it is cancelled.
    func atLaunch() async {
        let engine = self.engine
        let look = Task.detached(priority: .utility) { () async throws -> (RecoveryReport, Plan) in
            (try await engine.recover(), try await engine.plan())
        }
        let deadline = Task { try await Task.sleep(for: .seconds(1)); look.cancel() }
        defer { deadline.cancel() }
        do {
            let (recovery, plan) = try await look.value
            if !recovery.nothingToDo { print("launch: finished an interrupted cleanup") }
            print("launch: \(plan.actions.count) changes pending, \(plan.summary.bytesFreed) bytes to free")
        } catch is CancellationError {
            print("launch: no time for a look; the background task will do it")
        } catch {
            print("launch: \(error.localizedDescription)")
        }
    }

    /// In a background processing task: the launch apply (lock, recover, plan, apply), its progress read from
    /// the event stream; the task's expiration handler cancels it, which stops it between groups and rolls
    /// it back as `recover` would, leaving nothing half done.
    func inBackground(_ task: BackgroundTask) async -> String {
        let cancellation = StorageEngine.Cancellation()
        task.expirationHandler = { cancellation.cancel() }
        do {
            var done = 0
            for try await event in engine.events(cancellation: cancellation) {
                switch event {
                case .planning(let progress): print("background: scanned \(progress.entriesScanned) entries")
                case .applying(let finished, let total): print("background: \(finished) of \(total) steps")
                case .done: done += 1
                case .committed(let report): return "committed \(done) changes, \(report.bytesFreed) bytes freed"
                case .nothingToDo: return "nothing to do"
                default: break
                }
            }
            return "finished"
        } catch is CancellationError {
            return "expired: cancelled, nothing left half done"
        } catch EngineError.lockHeld {
            return "another run holds the lock: skipped"
        } catch {
            return "failed: \(error.localizedDescription)"
        }
    }
}
