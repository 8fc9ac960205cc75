// A plan being made on a thread of its own: its progress as an AsyncStream and the plan to await.
// Starting one never blocks; the stream ends when the plan is ready or has failed.

import StoragePolicyPlan

/// A plan in progress, from ``StorageEngine/startPlan()``.
public struct PlanningRun: Sendable {
    /// Progress reports while the walk runs; finishes when the plan is ready or planning failed.
    /// Only the newest few reports are buffered: a slow reader skips some, it never slows the walk.
    public let progress: AsyncStream<PlanProgress>
    private let task: Task<Result<Plan, EngineError>, Never>

    init(engine: StorageEngine) {
        let (stream, continuation) = AsyncStream.makeStream(of: PlanProgress.self, bufferingPolicy: .bufferingNewest(16))
        progress = stream
        task = Task {
            defer { continuation.finish() }
            do throws(EngineError) {
                return .success(try await engine.plan { continuation.yield($0) })
            } catch {
                return .failure(error)
            }
        }
    }

    /// Waits for the plan.
    /// - Throws: what ``StorageEngine/plan(progress:)`` throws.
    public func plan() async throws(EngineError) -> Plan { try await task.value.get() }

    /// Stops waiting for the plan; the walk already under way finishes in the background.
    public func cancel() { task.cancel() }
}
