// The Apple side of the app's day: registering and scheduling the BGProcessingTask, and a SwiftUI view that
// shows the cleanup's progress from the event stream. Compiled only where BackgroundTasks and SwiftUI exist;
// read against Apple's headers, not compiled on this project's Linux CI (Docs/library.md says so).
#if canImport(BackgroundTasks) && canImport(SwiftUI)
import BackgroundTasks
import SwiftUI
import StoragePolicy

enum BackgroundScheduler {
    /// Must also be listed in Info.plist under BGTaskSchedulerPermittedIdentifiers.
    static let identifier = "com.example.app.storage-cleanup"

    /// Call once, before the app finishes launching (App.init or application(_:didFinishLaunchingWithOptions:)).
    static func register(_ storage: ContainerStorage) {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            guard let task = task as? BGProcessingTask else { return }
            schedule()  // the next one
            // BGTask is not Sendable; the system expects it used from any thread, and only these two calls are made.
            nonisolated(unsafe) let processing = task
            let work = Task.detached(priority: .background) {
                // `inBackground` cancels the engine's call from the expiration handler it sets.
                let stand = BackgroundTask(expiringAfter: nil)
                processing.expirationHandler = { stand.expirationHandler?() }
                let outcome = await storage.inBackground(stand)
                processing.setTaskCompleted(success: !outcome.hasPrefix("failed"))
            }
            _ = work
        }
    }

    /// Asks for a run when the device is idle and charging; the system decides when.
    static func schedule() {
        let request = BGProcessingTaskRequest(identifier: identifier)
        request.requiresExternalPower = true
        request.requiresNetworkConnectivity = false
        try? BGTaskScheduler.shared.submit(request)
    }
}

/// A settings row that runs the cleanup now and shows its progress; leaving the view cancels it.
struct StorageCleanupView: View {
    let storage: ContainerStorage
    @State private var status = "Not run yet"

    var body: some View {
        Text(status)
            .task {
                do {
                    for try await event in storage.engine.events() {
                        switch event {
                        case .planning(let progress): status = "Scanned \(progress.entriesScanned) items"
                        case .applying(let done, let total): status = "Cleaning: \(done) of \(total)"
                        case .committed(let report): status = "Freed \(report.bytesFreed) bytes"
                        case .nothingToDo: status = "Nothing to clean"
                        default: break
                        }
                    }
                } catch is CancellationError {
                    status = "Stopped"
                } catch {
                    status = error.localizedDescription
                }
            }
    }
}
#endif
