// Must NOT compile: OutsidePackageTests type-checks this file against the built library and expects exactly the
// two errors named below. The async calls' handlers are @Sendable and run on the engine's threads, so a handler
// that mutates a captured `var` is refused ("mutation of captured var 'steps' in concurrently-executing code")
// rather than compiling into a data race. (The synchronous StorageEngine.apply(_:events:) takes a plain closure
// and calls it on the calling thread; EngineAsyncTests proves that.) Not a target of the package.
import StoragePolicy

func countSteps(_ engine: StorageEngine) async throws -> Int {
    var steps = 0
    _ = try await engine.apply { _ in steps += 1 }                 // error: mutation of captured var 'steps'
    _ = try await engine.plan(progress: { _ in steps += 1 })        // error: mutation of captured var 'steps'
    return steps
}
