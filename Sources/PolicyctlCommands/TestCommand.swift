// `policyctl test POLICY...`: runs the tests beside each policy (DIR/NAME.test.yaml and DIR/tests/NAME.test.yaml for
// DIR/NAME.yaml; a folder of its own keeps a folder of policies free of files that are not policies), as `opa test` does:
// each test's fixture tree is built in a private temporary folder, planned as of its `at`, and the planned
// actions and violations compared with the expected ones; a failure prints a diff. Exit 0 when every test
// passed (or was skipped), 1 when one failed or a policy has no tests, 65 for a malformed test file or policy.
import StoragePolicy

struct TestCommand: Command {
    static let summary = CommandSummary(
        name: "test",
        abstract: "Run a policy's tests (NAME.test.yaml): fixture trees and the actions and violations expected.",
        discussion: """
            For each policy DIR/NAME.yaml, runs DIR/NAME.test.yaml and DIR/tests/NAME.test.yaml (either or both). \
            Each test builds its \
            tree in a private temporary folder, plans as of its 'at' instant (as plan --at does), and compares \
            the actions and violations with 'expect'. A failure prints a diff: '-' expected and not planned, '+' \
            planned and not expected. A test whose tree names an owner or group runs only as root; otherwise it \
            is skipped. See Docs/testing-policies.md. Exit codes: 0 all passed, 1 a test failed or a policy has \
            no test file, 64 usage, 65 a malformed test file (at file:line:col) or an invalid policy, 74 I/O error.
            """,
        usage: ["<policy>..."]
    )

    struct Options: ParsableOptions {
        var files: [String] = []

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.files, "policy", help: "Policy files whose tests to run."),
        ] }

        static var options: [OptionField<Self>] { [] }
    }

    let files: [String]

    init(_ options: Options) throws { files = options.files }

    /// Where the tests of `policy` may be: DIR/NAME.test.yaml, then DIR/tests/NAME.test.yaml (NAME without
    /// `.yaml` / `.yml`).
    static func testFiles(of policy: String) -> [String] {
        var stem = policy
        for ext in [".yaml", ".yml"] where policy.hasSuffix(ext) { stem = String(policy.dropLast(ext.count)) }
        let slash = stem.lastIndex(of: "/")
        let folder = slash.map { String(stem[...$0]) } ?? ""
        let name = slash.map { String(stem[stem.index(after: $0)...]) } ?? stem
        return [stem + ".test.yaml", folder + "tests/" + name + ".test.yaml"]
    }

    func run() throws -> ExitCode {
        var passed = 0, failed = 0, skipped = 0
        var malformed = false
        for policyPath in files {
            let loaded = try DiagnosticStyle.load(policyPath)
            var found: [(path: String, bytes: [UInt8])] = []
            for testPath in Self.testFiles(of: policyPath) {
                do {
                    // Read as the policy is: root takes it only from a file root (or the euid) owns, in folders no
                    // one else can write.
                    found.append((testPath, try TrustedFile.read(testPath, limit: 1 << 22, what: "test file")))
                } catch where error.errno == .noSuchFile {
                } catch {
                    throw CommandFailure(code: error.errno == nil ? .invalidPolicy : .ioError, message: "\(error)")
                }
            }
            if found.isEmpty {
                let places = Self.testFiles(of: policyPath).joined(separator: " or ")
                Terminal.out("FAIL  \(policyPath): no tests: write them in \(places) (see Docs/testing-policies.md)")
                failed += 1
                continue
            }
            for (testPath, bytes) in found {
                let tests: PolicyTestFile
                do {
                    tests = try PolicyTestFile.parse(bytes, file: testPath)
                } catch {
                    Terminal.err("\(error)")
                    malformed = true
                    continue
                }
                for test in tests.cases {
                    let place = "\(testPath):\(test.mark.line):\(test.mark.column)"
                    switch PolicyTestRun.run(test, policy: loaded.policy) {
                    case .passed:
                        passed += 1
                        Terminal.out("ok    \(place)  \(test.name)")
                    case .skipped(let why):
                        skipped += 1
                        Terminal.out("skip  \(place)  \(test.name): \(why)")
                    case .broken(let why):
                        failed += 1
                        Terminal.out("FAIL  \(place)  \(test.name): \(why)")
                    case .failed(let expected, let planned):
                        failed += 1
                        Terminal.out("FAIL  \(place)  \(test.name)")
                        Terminal.out("      --- expected")
                        Terminal.out("      +++ planned at \(WallClock.rfc3339(ns: test.atNs))")
                        for line in PolicyTestRun.diff(expected: expected, planned: planned) { Terminal.out("      " + line) }
                    }
                }
            }
        }
        let total = passed + failed + skipped
        Terminal.out("\(total) test\(total == 1 ? "" : "s"): \(passed) passed, \(failed) failed, \(skipped) skipped")
        if malformed { return .invalidPolicy }
        return failed > 0 ? .findings : .success
    }
}
