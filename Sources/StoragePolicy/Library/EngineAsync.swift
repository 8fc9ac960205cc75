// The async forms of the engine's calls, for apps: each runs the synchronous call on a thread of the engine's
// pool (never Swift's cooperative pool: the walk blocks in system calls), suspends the caller meanwhile, and is
// cancellable: Task cancellation and `Cancellation.cancel()` set the call's CancellationFlag, which the walk
// looks at between directories and apply between groups. A cancelled call throws `CancellationError`.
//
// Events: every handler here is `@Sendable` and is called from the engine's threads, one call at a time, so
// the compiler refuses a handler that mutates a captured `var` (Swift 6: "mutation of captured var in
// concurrently-executing code"); hop to the main actor inside it, or read `events()`, an AsyncThrowingStream.
// The synchronous `StorageEngine.apply(_:events:)` is the other shape: its handler need not be Sendable,
// because every event reaches it on the calling thread.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply
@_spi(Layers) import StoragePolicyReports

extension StorageEngine {
    /// A way to stop a running call from anywhere (a `BGTask` expiration handler, a Cancel button): pass it to
    /// the `async` calls, then `cancel()`. Task cancellation does the same without it. One token may serve
    /// several calls; once cancelled it stays so.
    public final class Cancellation: Sendable {
        let flag = CancellationFlag()

        public init() {}

        /// Stops the calls it was passed to at their next check (between directories of a walk, between
        /// groups of an apply); they throw `CancellationError`. Returns at once; safe from any thread.
        public func cancel() { flag.cancel() }

        /// True once ``cancel()`` was called.
        public var isCancelled: Bool { flag.isCancelled }
    }

    // MARK: async forms

    /// ``plan(progress:)`` on a thread of its own: the caller (the main actor, say) is suspended, not blocked.
    /// `progress` is called from the walking threads, one call at a time.
    /// - Throws: `CancellationError` when the task or `cancellation` is cancelled (within one directory's
    ///   work), else an ``EngineError``.
    public func plan(cancellation: Cancellation? = nil,
                     progress: (@Sendable (PlanProgress) -> Void)? = nil) async throws -> Plan {
        try await cancellable(cancellation) { flag throws(EngineError) in
            try self.with(flag).plan(progress: progress)
        }
    }

    /// ``audit(only:baseline:failOn:progress:)`` on a thread of its own, cancellable like ``plan(cancellation:progress:)``.
    public func audit(only restriction: PathRestriction? = nil, baseline: Baseline? = nil, failOn: Rule.Severity = .warning,
                      cancellation: Cancellation? = nil,
                      progress: (@Sendable (PlanProgress) -> Void)? = nil) async throws -> AuditReport {
        try await cancellable(cancellation) { flag throws(EngineError) in
            try self.with(flag).audit(only: restriction, baseline: baseline, failOn: failOn, progress: progress)
        }
    }

    /// The launch call, ``apply(maxDelete:)``, on a thread of its own: lock, recover, plan, apply. Cancelled, it
    /// stops between directories of the plan or between groups of the apply; a started transaction is rolled
    /// back as `recover` would (the file deletes made stay made) and journaled as cancelled, then
    /// `CancellationError` is thrown: nothing is left for ``recover()``. `events` sees every step (from the
    /// engine's thread, in order).
    public func apply(maxDelete: DeleteLimit? = nil, cancellation: Cancellation? = nil,
                      events: (@Sendable (ApplyEvent) -> Void)? = nil) async throws -> ApplyResult {
        try await applying(request(.policy(policy), maxDelete: maxDelete), cancellation: cancellation, events: events)
    }

    /// ``apply(_:maxDelete:)`` on a thread of its own, cancellable like ``apply(maxDelete:cancellation:events:)``.
    public func apply(_ plan: Plan, maxDelete: DeleteLimit? = nil, cancellation: Cancellation? = nil,
                      events: (@Sendable (ApplyEvent) -> Void)? = nil) async throws -> ApplyResult {
        try await applying(request(.plan(plan, policy: policy), maxDelete: maxDelete), cancellation: cancellation, events: events)
    }

    /// ``recover()`` on a thread of its own. Recovery is never stopped halfway: a cancellation before it starts
    /// throws `CancellationError`; once started it finishes (it is what makes the tree consistent again).
    public func recover() async throws -> RecoveryReport {
        try Task.checkCancellation()
        return try await cancellable(nil) { _ throws(EngineError) in try self.recover() }
    }

    /// ``undo(_:session:events:decide:)`` for this engine's root on a thread of its own: `decide` sees what would
    /// be undone. Like ``recover()``, cancellable only before it starts. Nil when nothing was ever applied here.
    public func undo(_ transaction: String,
                     decide: @escaping @Sendable (UndoPlan) -> Bool = { _ in true }) async throws -> (plan: UndoPlan, report: ApplyReport?)? {
        try Task.checkCancellation()
        let session = Session(root: root, stateDirectory: stateDirectory, waitForLock: waitForLock)
        return try await cancellable(nil) { _ throws(EngineError) in
            try StorageEngine.undo(transaction, session: session, decide: decide)
        }
    }

    // MARK: the event stream

    /// The launch apply as a stream of its events, for SwiftUI progress: `for try await event in
    /// engine.events()`. The stream finishes after ``ApplyEvent/committed(_:)`` (or `nothingToDo`), or throws
    /// what the apply throws (`CancellationError` when cancelled). Ending the iteration early (a view going
    /// away, the task cancelled) cancels the apply, which stops and rolls back as above.
    public func events(maxDelete: DeleteLimit? = nil, cancellation: Cancellation? = nil) -> AsyncThrowingStream<ApplyEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ApplyEvent.self, throwing: (any Error).self)
        let token = cancellation ?? Cancellation()
        let request = request(.policy(policy), maxDelete: maxDelete)
        let task = Task {
            do {
                _ = try await applying(request, cancellation: token) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination { token.cancel(); task.cancel() }
        }
        return stream
    }

    // MARK: the machinery

    /// This engine with `flag` in its plan options.
    private func with(_ flag: CancellationFlag) -> StorageEngine {
        var engine = self
        engine.planOptions.cancellation = flag
        return engine
    }

    private func applying(_ request: ApplyRequest, cancellation: Cancellation?,
                          events: (@Sendable (ApplyEvent) -> Void)?) async throws -> ApplyResult {
        try await cancellable(cancellation) { flag throws(EngineError) in
            var request = request
            request.cancellation = flag
            return try self.applyUnconfirmed(request, events: events ?? { _ in })
        }
    }

    /// Runs `work` on a thread of the engine's pool with a flag that Task cancellation and `token` set, and
    /// suspends the caller until it is done (the continuation is resumed from that thread). A cancelled call's
    /// ``EngineError/cancelled(transaction:)`` becomes `CancellationError`.
    private func cancellable<R: Sendable>(_ token: Cancellation?,
                                          _ work: @escaping @Sendable (CancellationFlag) throws(EngineError) -> R) async throws -> R {
        let flag = token?.flag ?? CancellationFlag()
        let result: Result<R, EngineError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let job: @Sendable () -> Void = {
                    continuation.resume(returning: Result { () throws(EngineError) -> R in try work(flag) })
                }
                // No thread to be had (the system refused one): the work still gets done, on this thread.
                if WorkerPool.shared.start(job) == nil { job() }
            }
        } onCancel: {
            flag.cancel()
        }
        switch result {
        case .success(let value): return value
        case .failure(.cancelled): throw CancellationError()
        case .failure(let error): throw error
        }
    }
}
