// An app's use of the library from outside its package: URLs in, public API only, Swift 6 mode.
//
//   OutsideApp WORK BIG [ENTRIES]
//
// WORK is an empty scratch folder (on a file system with user xattrs), BIG one for the large tree (tmpfs is
// fastest), ENTRIES its size (1,000,000 unless given). Three parts, each printing what it found; a check that
// fails prints `FAIL: ...` on stderr and exits 1, so OutsidePackageTests (EndToEndTests) can assert exact lines.
//   container     plans and applies the bundled ios-app-sandbox policy on a small app container
//   plan-cancel   cancels a plan of the ENTRIES tree 30 ms after it started; CancellationError, and how soon
//   apply-cancel  cancels an apply after its first group of deletes; the tree as a crash and recover leave it
import Foundation
import StoragePolicy

struct CheckFailed: Error, CustomStringConvertible {
    var description: String
}

/// Stops the run with `message` unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw CheckFailed(description: message()) }
}

@main
struct OutsideApp {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else {
            FileHandle.standardError.write(Data("usage: OutsideApp WORK BIG [ENTRIES]\n".utf8))
            exit(64)
        }
        let work = URL(fileURLWithPath: arguments[1], isDirectory: true)
        let big = URL(fileURLWithPath: arguments[2], isDirectory: true)
        let entries = arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000
        do {
            try await ContainerPart.run(work.appendingPathComponent("container", isDirectory: true), policies: work)
            try await PlanCancelPart.run(big, entries: entries, policies: work)
            try await ApplyCancelPart.run(work.appendingPathComponent("cancel", isDirectory: true), policies: work)
            print("ok")
        } catch {
            FileHandle.standardError.write(Data("FAIL: \(error)\n".utf8))
            exit(1)
        }
    }
}

/// The bundled app-sandbox policy on a small container: the plan, the apply, and a second plan with nothing left.
enum ContainerPart {
    static func run(_ root: URL, policies: URL) async throws {
        try Files.directory(root) {
            try Files.directory(root.appendingPathComponent("tmp")) {
                try Files.file(root.appendingPathComponent("tmp/old.dat"), age: .seconds(30 * 3600))
                try Files.file(root.appendingPathComponent("tmp/fresh.dat"), age: .seconds(2 * 3600))
            }
            try Files.directory(root.appendingPathComponent("Documents")) {
                try Files.directory(root.appendingPathComponent("Documents/UserFiles")) {
                    try Files.file(root.appendingPathComponent("Documents/UserFiles/Notes.TXT"), age: .seconds(2 * 86400))
                    try Files.file(root.appendingPathComponent("Documents/UserFiles/photo.jpg.download"), age: .seconds(3 * 3600))
                    try Files.file(root.appendingPathComponent("Documents/UserFiles/inflight.tmp"), age: .seconds(600))
                }
            }
        }
        // The app ships its policy as a file (a resource in its bundle): here, the library's bundled copy.
        let policyFile = policies.appendingPathComponent("ios-app-sandbox.yaml")
        let bundled = try require(BundledPolicies.named("ios-app-sandbox"), "the bundled ios-app-sandbox policy")
        try Data(bundled.fileContents.utf8).write(to: policyFile)

        var engine = try StorageEngine(policyFile: policyFile, root: root)
        engine.waitForLock = false
        // A download the app has in flight: no process table knows it on iOS; the app says so.
        engine.inUse = { path in path.escaped == "Documents/UserFiles/photo.jpg.download" }
        let plan = try await engine.plan()
        for action in plan.actions { print("container: plan: \(ApplyCancelPart.describe(action)) (\(action.rule))") }
        for entry in plan.skipped { print("container: kept: \(entry.path.escaped): \(entry.reason)") }
        let result = try await engine.apply(plan)
        // Bytes freed are blocks, which differ between file systems: checked, not printed.
        try check(result.report.bytesFreed > 0, "the apply freed \(result.report.bytesFreed) bytes")
        print("container: applied \(result.counts)")
        for line in Files.tree(root) where !line.hasPrefix(".policyctl") { print("container: tree: \(line)") }
        let again = try await engine.plan()
        try check(again.actions.isEmpty, "a second plan of the container still has \(again.actions.count) action(s)")
        print("container: a second plan has nothing to do")
    }
}

/// An optional that must be there: the value, or a failed check naming `what`.
func require<T>(_ value: T?, _ what: String) throws -> T {
    guard let value else { throw CheckFailed(description: "missing: \(what)") }
    return value
}
