// Where the ecosystem looks (issue 30): the Homebrew formula, the composite GitHub Action and the schema's
// SchemaStore entry. Neither Homebrew nor the Actions runner is here, so each file's shape is checked: the formula
// names files that exist and installs the Makefile's layout (and `ruby -c` passes where ruby is installed); the
// action is read with the policy loader's own YAML reader (actionlint checks workflows, not action.yml).
import Foundation
import Testing
@testable import StoragePolicyModel

@Suite("the Homebrew formula, the GitHub Action and the SchemaStore entry")
struct EcosystemTests {
    static let root = SchemaFixture.packageRoot
    static func read(_ relative: String) throws -> String { try SchemaFixture.read(root + "/" + relative) }

    /// The double-quoted strings of a Ruby or YAML text.
    static func quoted(_ text: String) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("the formula names files that exist and installs what make install does, where it does")
    func formula() throws {
        let formula = try Self.read("Formula/policyctl.rb")
        let makefile = try Self.read("Makefile")
        let sources = Self.quoted(formula).filter { $0.hasPrefix("Sources/") || $0.hasPrefix("Docs/") || $0.hasPrefix("Policies/") }
        #expect(sources.count >= 6, "\(sources)")
        for path in sources {
            if path.contains("*") {
                let folder = String(path[..<path.lastIndex(of: "/")!]), suffix = String(path[path.index(after: path.lastIndex(of: "*")!)...])
                let names = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/" + folder)
                #expect(names.contains { $0.hasSuffix(suffix) }, "\(path) matches nothing")
            } else {
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + path), "\(path) does not exist")
            }
        }
        // The same products, and the same layout: each pair is the Makefile's line and the formula's.
        let layout: [(make: String, brew: String)] = [
            ("--product policyctl", "\"--product\", \"policyctl\""),
            ("--product PolicyctlScripting", "\"--product\", \"PolicyctlScripting\""),
            ("$(MANDIR)/man1/policyctl.1", "man1/\"policyctl.1\""),
            ("$(MANDIR)/man5/policyctl-policy.5", "man5/\"policyctl-policy.5\""),
            ("completions bash", "generate_completions_from_executable(bin/\"policyctl\", \"completions\""),
            ("Policies/*.yaml $(SHAREDIR)/policies/", "(pkgshare/\"policies\").install Dir[\"Policies/*.yaml\"]"),
            ("Docs/policy.schema.json $(SHAREDIR)/", "pkgshare.install \"Docs/policy.schema.json\""),
            ("$(SHAREDIR)/systemd/", "(pkgshare/\"systemd\")"),
            ("LIBDIR := $(DESTDIR)$(PREFIX)/lib/policyctl", "scripting = lib/\"policyctl\""),
            ("$(LIBDIR)/Modules/", "(scripting/\"Modules\").install"),
            ("Modules/StoragePolicy*.swiftmodule", "Modules/StoragePolicy*.swiftmodule"),
            ("Modules/PolicyctlCommands.swiftmodule", "Modules/PolicyctlCommands.swiftmodule"),
            ("Sources/CPosix/include/CPosix.h $(LIBDIR)/include/CPosix/", "(scripting/\"include/CPosix\").install \"Sources/CPosix/include/CPosix.h\""),
            ("Sources/CYAML/shim.h $(LIBDIR)/include/CYAML/", "(scripting/\"include/CYAML\").install \"Sources/CYAML/shim.h\""),
            ("libPolicyctlScripting", "shared_library(\"libPolicyctlScripting\")"),
        ]
        for (make, brew) in layout {
            #expect(makefile.contains(make), "the Makefile no longer has \(make): update Formula/policyctl.rb with it")
            #expect(formula.contains(brew), "the formula lacks \(brew)")
        }
        // The module maps say what the Makefile's printf lines say.
        #expect(makefile.contains(#"module CPosix {\n    umbrella header "CPosix.h"\n    export *\n}\n"#))
        #expect(formula.contains("module CPosix {\n          umbrella header \"CPosix.h\"\n          export *\n      }"))
        #expect(makefile.contains(#"module CYAML [system] {\n    header "shim.h"\n    export *\n}\n"#))
        #expect(formula.contains("module CYAML [system] {\n          header \"shim.h\"\n          export *\n      }"))
        #expect(formula.contains("depends_on \"libyaml\"") && formula.contains("\"-c\", \"release\""))
        let package = try Self.read("Package.swift")
        #expect(package.contains("\"PolicyctlScripting\"") && package.contains("name: \"policyctl\""))

        guard let ruby = ["/usr/bin/ruby", "/usr/local/bin/ruby"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            print("ruby is not installed; EcosystemTests.formula checked the formula's text only")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ruby)
        process.arguments = ["-c", Self.root + "/Formula/policyctl.rb"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
    }

    static func value(_ pairs: [(key: Node, value: Node)]?, _ key: String) -> Node? { pairs?.first { $0.key.scalar == key }?.value }

    @Test("action.yml: a composite action that installs, audits as SARIF, uploads it and writes a step summary")
    func action() throws {
        let text = try Self.read("action.yml")
        let node = try #require(try YAML.load(Array(text.utf8))?.mapping)
        #expect(Self.value(node, "name")?.scalar == "policyctl audit")
        #expect(Self.value(node, "description")?.scalar?.isEmpty == false)
        let inputs = try #require(Self.value(node, "inputs")?.mapping)
        let inputNames = Set(inputs.compactMap(\.key.scalar))
        #expect(inputNames == ["policy", "root", "baseline", "fail-on", "upload-sarif"])
        for (name, input) in inputs {
            #expect(Self.value(input.mapping, "description")?.scalar?.isEmpty == false, "input \(name.scalar ?? "")")
        }
        let runs = try #require(Self.value(node, "runs")?.mapping)
        #expect(Self.value(runs, "using")?.scalar == "composite")
        let sequence = try #require(Self.value(runs, "steps")?.sequence)
        let steps = sequence.compactMap { $0.mapping }
        let ids = Set(steps.compactMap { Self.value($0, "id")?.scalar })
        var scripts: [String] = []
        for step in steps {
            let run = Self.value(step, "run")?.scalar, uses = Self.value(step, "uses")?.scalar
            #expect((run == nil) != (uses == nil), "a step runs a script or uses an action")
            if let run {
                // A composite step must say its shell; inputs reach scripts through env:, never pasted in.
                #expect(Self.value(step, "shell")?.scalar == "bash")
                #expect(!run.contains("${{"), "\(run)")
                scripts.append(run)
            }
        }
        let all = scripts.joined(separator: "\n")
        #expect(all.contains("scripts/bootstrap.sh") && all.contains("swift build --package-path \"$GITHUB_ACTION_PATH\" -c release --product policyctl"))
        #expect(all.contains("--format sarif --output \"$sarif\"") && all.contains(">> \"$GITHUB_STEP_SUMMARY\""))
        let upload = try #require(steps.first { Self.value($0, "uses")?.scalar?.hasPrefix("github/codeql-action/upload-sarif@") == true })
        #expect(Self.value(Self.value(upload, "with")?.mapping, "sarif_file")?.scalar == "${{ steps.audit.outputs.sarif-file }}")
        // Every `inputs.X` and `steps.Y` the file names exists.
        for reference in text.components(separatedBy: "inputs.").dropFirst() {
            let name = String(reference.prefix { $0.isLetter || $0 == "-" })
            #expect(inputNames.contains(name), "inputs.\(name) is not an input")
        }
        for reference in text.components(separatedBy: "steps.").dropFirst() {
            let id = String(reference.prefix { $0.isLetter || $0 == "-" })
            #expect(ids.contains(id), "steps.\(id) is no step's id")
        }
    }

    @Test("the schema has the $id and title SchemaStore needs, and ci.md the catalog entry with its file patterns")
    func schemaStore() throws {
        let schema = try SchemaFixture.schema()
        let id = try #require(schema["$id"]?.string)
        #expect(id.hasPrefix("https://") && id.hasSuffix("/Docs/policy.schema.json"))
        #expect(schema["title"]?.string?.isEmpty == false)
        let ci = try Self.read("Docs/ci.md")
        let start = try #require(ci.range(of: "```json\n{\n  \"name\": \"policyctl\""))
        let end = try #require(ci.range(of: "\n```", range: start.upperBound..<ci.endIndex))
        let entry = try JSONValue(json: String(ci[ci.index(start.lowerBound, offsetBy: 8)..<end.lowerBound]))
        #expect(entry["url"]?.string == id)
        #expect(entry["fileMatch"]?.array?.compactMap(\.string) == ["*.policyctl.yaml", ".policyctl.yaml", "policyctl.d/*.yaml"])
        #expect(entry["description"]?.string?.isEmpty == false)
    }
}
