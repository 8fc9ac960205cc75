// .github/workflows/ci.yml: the jobs for the platforms this machine cannot build (macOS, the iOS Simulator) and
// the Linux job that runs .ci/run. Read with the policy loader's own YAML reader, so a broken file fails here;
// actionlint checks it too where it is installed (it is not a Debian package, and its PyPI wrapper downloads
// the binary at install time, which CI's network refuses).
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("the GitHub Actions workflow")
struct WorkflowTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".github/workflows/ci.yml")

    static func job(_ jobs: [(key: Node, value: Node)], _ name: String) -> [(key: Node, value: Node)]? {
        jobs.first { $0.key.scalar == name }?.value.mapping
    }

    static func runs(_ job: [(key: Node, value: Node)]) -> [String] {
        let steps = job.first { $0.key.scalar == "steps" }?.value.sequence ?? []
        return steps.compactMap { $0.mapping?.first { $0.key.scalar == "run" }?.value.scalar }
    }

    @Test("a Linux job running .ci/run, a macOS job building and testing, an iOS Simulator build of the library")
    func jobs() throws {
        let node = try YAML.load(Array(try Data(contentsOf: Self.file)))
        let jobs = try #require(node?.mapping?.first { $0.key.scalar == "jobs" }?.value.mapping)
        #expect(jobs.map { $0.key.scalar ?? "" } == ["linux", "macos", "ios-simulator"])
        #expect(Self.runs(try #require(Self.job(jobs, "linux"))) == ["bash .ci/run"])
        let mac = Self.runs(try #require(Self.job(jobs, "macos")))
        #expect(mac.contains("swift build") && mac.contains("swift test") && mac.contains("brew install libyaml pkg-config"))
        let ios = Self.runs(try #require(Self.job(jobs, "ios-simulator")))
        #expect(ios.contains("xcodebuild build -scheme StoragePolicy -destination 'generic/platform=iOS Simulator' -skipPackagePluginValidation"))
        for (_, job) in jobs {
            #expect(job.mapping?.contains { $0.key.scalar == "runs-on" } == true)
        }
    }

    @Test("actionlint finds nothing (when installed)")
    func actionlint() throws {
        let candidates = ["/usr/local/bin/actionlint", "/usr/bin/actionlint"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/actionlint" }
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            print("actionlint is not installed; WorkflowTests.jobs checked the workflow's shape only")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [Self.file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
    }
}
