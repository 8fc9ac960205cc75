// Example: what an app runs at launch. Applies the bundled app-sandbox policy to its container, then says
// what it did. Usage: LaunchCleanup ROOT [POLICY.yaml]; never touches anything outside ROOT.
import StoragePolicy
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments.dropFirst()
guard let root = arguments.first else {
    FileHandleOutput.error("usage: LaunchCleanup ROOT [POLICY.yaml]   (default: the bundled ios-app-sandbox policy)")
    exit(64)
}

// An app ships its policy inside the binary; a second argument reads another one from disk instead.
let engine: StorageEngine
do {
    if let file = arguments.dropFirst().first {
        engine = try StorageEngine(policyFile: file, root: root)
    } else {
        // The library carries the reference policies (Policies/*.yaml) byte for byte.
        engine = try StorageEngine(yaml: BundledPolicies.named("ios-app-sandbox")!.fileContents, file: "ios-app-sandbox.yaml", root: root)
    }
} catch {
    FileHandleOutput.error(error.description)
    exit(65)
}

// At launch the app must not wait behind another run: if one holds the lock, skip this time.
var launch = engine
launch.waitForLock = false

do {
    let result = try launch.apply()
    print("launch cleanup of \(root) with policy '\(engine.policy.name)'")
    for entry in result.recovery.entries {
        print("recovered interrupted transaction \(entry.transaction): \(entry.resolution)")
    }
    for item in result.report.items {
        let destination = item.destination.map { " -> \($0.escaped)" } ?? ""
        switch item.outcome {
        case .done: print("\(item.verb) \(item.action.path.escaped)\(destination) (\(item.action.rule))")
        case .unchanged(let why): print("unchanged \(item.action.path.escaped): \(why)")
        case .skipped(let why): print("skipped \(item.action.path.escaped): \(why)")
        }
    }
    for violation in result.plan.violations {
        print("violation \(violation.rule): \(violation.path.escaped): \(violation.message)")
    }
    let done = result.report.done
    print("applied \(done) change\(done == 1 ? "" : "s"), freed \(result.report.bytesFreed) bytes"
          + (result.transaction.map { " (transaction \($0))" } ?? ""))
} catch .lockHeld(let pid) {
    print("another run holds the lock\(pid.map { " (pid \($0))" } ?? ""); skipped this launch")
} catch {
    FileHandleOutput.error("launch cleanup failed: \(error)")
    exit(error.needsRecovery ? 74 : 3)
}
