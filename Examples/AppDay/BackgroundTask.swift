// The background task the cleanup runs in. On iOS and tvOS this is where a BGProcessingTask's handler hands
// over (see BackgroundScheduler.swift); everywhere else a stand-in with the same shape: an expiration handler
// the system calls when the time granted is up, here after `--expire-after MS` (0: expired before it starts).
import Foundation

final class BackgroundTask: @unchecked Sendable {
    // Set once by the task's code before any expiry can call it, as with BGTask.expirationHandler.
    private let lock = NSLock()
    private var handler: (@Sendable () -> Void)?
    private var expired = false
    private let expiry: Duration?

    init(expiringAfter expiry: Duration?) {
        self.expiry = expiry
    }

    /// Called when the time is up (at once when set after the task already expired).
    var expirationHandler: (@Sendable () -> Void)? {
        get { lock.withLock { handler } }
        set {
            let fire = lock.withLock { () -> Bool in handler = newValue; return expired }
            if fire { newValue?() }
            guard let expiry, !fire else { return }
            if expiry == .zero { expire(); return }
            Task.detached { [weak self] in
                try? await Task.sleep(for: expiry)
                self?.expire()
            }
        }
    }

    private func expire() {
        let run = lock.withLock { () -> (@Sendable () -> Void)? in expired = true; return handler }
        run?()
    }
}
