// A plan being made on a thread of its own: its progress as an AsyncStream and the plan to await.
// Starting one never blocks; the stream ends when the plan is ready or has failed.

@_spi(Layers) import StoragePolicyPlan

/// A plan in progress, from ``StorageEngine/startPlan()``.
public struct PlanningRun: Sendable {
    /// Progress reports while the walk runs; finishes when the plan is ready or planning failed.
    /// Only the newest few reports are buffered: a slow reader skips some, it never slows the walk.
    public let progress: AsyncStream<PlanProgress>
    private let task: Task<Result<Plan, any Error>, Never>
    private let token: StorageEngine.Cancellation

    init(engine: StorageEngine) {
        let (stream, continuation) = AsyncStream.makeStream(of: PlanProgress.self, bufferingPolicy: .bufferingNewest(16))
        progress = stream
        let token = StorageEngine.Cancellation()
        self.token = token
        task = Task {
            defer { continuation.finish() }
            do {
                return .success(try await engine.plan(cancellation: token) { continuation.yield($0) })
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits for the plan.
    /// - Throws: `CancellationError` after ``cancel()``, else the ``EngineError`` of ``StorageEngine/plan(progress:)``.
    public func plan() async throws -> Plan { try await task.value.get() }

    /// Stops the walk before its next directory; ``plan()`` then throws `CancellationError`.
    public func cancel() { token.cancel() }
}
