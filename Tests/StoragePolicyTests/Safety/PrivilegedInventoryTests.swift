// Every privileged operation root makes (unlink, rename, mkdir, symlink, file creation, chown, chmod, xattr set and
// remove, utimes, truncation, and the resolution of a root, state or trash path) is named in Docs/safety.md's
// "Privileged operations" inventory, as InputInventoryTests holds the inputs: the Sources (Swift and C) are
// scanned for call sites of those system calls and of the wrappers that make them, attributed to the function
// that holds them, and a site the `privileged` block does not list (or lists with other operations) fails this
// test, named. Each listed site points at a row of the table above the block, which says what the operation acts
// on, what it checks first and which co-tenant test attacks it; every test a row names must exist.
import Foundation
import Testing

@Suite("Docs/safety.md's privileged-operations inventory names every call site in Sources")
struct PrivilegedInventoryTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// Each operation and the call sites that make it: a wrapper's method, a system_* wrapper, a CPosix call, or
    /// the libc call itself (only Platform/Syscalls.swift, PolicyctlCommands/Platform.swift and CPosix may make
    /// those: PlatformLayeringTests). Enum cases named like the calls (`.rename(to:`, `case .setPermissions(let`)
    /// are not calls and are left out.
    static let operations: [(name: String, pattern: String)] = [
        ("unlink", #"(?:\.|(?<![\w.]))(removeFile|removeFileIfPresent|removeDirectory|removeTree)\((?!let\b)|\bsystem_(unlinkat|unlink)\(|(?<![\w.])(unlinkat|unlink)\("#),
        ("rename", #"(?:\.|(?<![\w.]))rename\((?!let\b|to:|from:)[^,()]+(\([^()]*\))?,\s*to:|\bcposix_renameat2\(|\bsystem_(rename|renameat)\(|(?<![\w.])(renameat2|renameat|rename)\("#),
        ("mkdir", #"(?:\.|(?<![\w.]))makeDirectory\(|\bsystem_(mkdirat|mkdir|mkdtemp)\(|PathChase\.makeDirectories\(|(?<![\w.])(mkdirat|mkdir|mkdtemp)\("#),
        ("symlink", #"(?:\.|(?<![\w.]))makeSymlink\(|\bsystem_symlinkat\(|(?<![\w.])(symlinkat|symlink|linkat|link)\("#),
        ("create", #"openFile\([^\n]*\.create|openFile\([^\n]*options:\s*options\b|\bsystem_open(at)?\([^\n]*CInterop\.Mode\(|\bsystem_open\([^\n]*\.create|\bsystem_openat\([^\n]*_O_CREAT|(?<![\w.])O_CREAT\b"#),
        ("chown", #"(?:\.|(?<![\w.]))setOwner\((?!let\b)|\bsystem_(fchown|fchownat)\(|(?<![\w.])(fchownat|fchown|lchown|chown)\("#),
        ("chmod", #"(?:\.|(?<![\w.]))setPermissions\((?!let\b|mode:)|\bsystem_fchmod\(|(?<![\w.])(fchmodat|fchmod|chmod)\("#),
        ("xattr", #"(?:\.|(?<![\w.]))(setExtendedAttribute|removeExtendedAttribute)\((?!let\b)|\bcposix_(setxattrat|removexattrat)\(|(?<![\w.])(setxattr|lsetxattr|fsetxattr|removexattr|lremovexattr|fremovexattr)\(|CSBackupSetItemExcluded\(|isExcludedFromBackup\s*="#),
        ("utimes", #"(?:\.|(?<![\w.]))setTimes\(|\bsystem_utimensat\(|(?<![\w.])(utimensat|futimens|utimes)\("#),
        ("truncate", #"\.truncate\(to:|\bsystem_(ftruncate|posix_fallocate)\(|(?<![\w.])(truncate|ftruncate|posix_fallocate)\("#),
        ("resolve", #"DirectoryHandle\.open\((root|kernelPath):|PathChase\.(directory|parent|folder)\(|WalkDirectory\.open\(root:|\bsystem_realpath\(|(?<![\w.])realpath\("#),
    ]

    /// A Swift declaration that starts a function (its name attributes the lines below it).
    static let swiftDeclaration = try! NSRegularExpression(pattern:
        #"^\s*(?:@[\w().]+\s+)*(?:(?:public|package|private|fileprivate|internal|static|final|override|mutating|nonisolated|class)\s+)*(?:func\s+([A-Za-z_]\w*)|(init)\??\s*[(<]|(deinit)\b)"#)
    /// A C function definition's first line.
    static let cDeclaration = try! NSRegularExpression(pattern: #"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;]*$"#)
    /// Lines that only name a call: enum cases, option constants.
    static let declarationOnly = try! NSRegularExpression(pattern: #"^\s*(?:indirect\s+)?case\s+\w+\(|static let \w+ = |let _O_"#)
    static let compiled = operations.map { ($0.name, try! NSRegularExpression(pattern: $0.pattern)) }

    static func first(_ regex: NSRegularExpression, _ line: String) -> NSTextCheckingResult? {
        regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line))
    }

    /// `path  function` to the operations its lines make, for one source file's text (`path` relative to Sources).
    static func sites(in text: String, path: String) -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        var function = "(top)"
        let isC = path.hasSuffix(".c")
        for lineSlice in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(lineSlice)
            if isC {
                if !line.hasPrefix("if") && !line.hasPrefix("while") && !line.hasPrefix("for") && !line.hasPrefix("return") && !line.hasPrefix("#"),
                   let m = first(cDeclaration, line), let r = Range(m.range(at: 1), in: line) {
                    function = String(line[r])
                }
            } else if let m = first(swiftDeclaration, line) {
                for group in 1...3 {
                    if let r = Range(m.range(at: group), in: line) { function = String(line[r]); break }
                }
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("*") || trimmed.hasPrefix("/*") || trimmed.hasPrefix("#") { continue }
            if first(declarationOnly, line) != nil { continue }
            var code = line.components(separatedBy: " //")[0]
            code = code.replacingOccurrences(of: #""(?:[^"\\]|\\.)*""#, with: "\"\"", options: .regularExpression)
            // A declaration's own name is no call of it (a wrapper's body, on the same line, still is).
            code = code.replacingOccurrences(of: #"\bfunc\s+\w+"#, with: "func _", options: .regularExpression)
            for (name, regex) in compiled where first(regex, code) != nil {
                found[path + "  " + function, default: []].insert(name)
            }
        }
        return found
    }

    /// Every call site in Sources.
    static func scan() throws -> [String: Set<String>] {
        let sources = packageRoot + "/Sources"
        var found: [String: Set<String>] = [:]
        let walker = FileManager.default.enumerator(atPath: sources)
        while let relative = walker?.nextObject() as? String {
            guard relative.hasSuffix(".swift") || relative.hasSuffix(".c") else { continue }
            let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
            found.merge(sites(in: text, path: relative)) { $0.union($1) }
        }
        return found
    }

    static func doc() throws -> String {
        try String(contentsOfFile: packageRoot + "/Docs/safety.md", encoding: .utf8)
    }

    /// The `privileged` block: `site  function` to (operations, row).
    static func inventory(_ doc: String) -> [String: (operations: Set<String>, row: String)] {
        guard let start = doc.range(of: "```privileged\n"), let end = doc.range(of: "```", range: start.upperBound..<doc.endIndex) else {
            Issue.record("Docs/safety.md has no ```privileged block")
            return [:]
        }
        var listed: [String: (Set<String>, String)] = [:]
        for line in doc[start.upperBound..<end.lowerBound].split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(whereSeparator: { $0 == " " }).map(String.init)
            guard fields.count == 4 else {
                Issue.record("a privileged line needs FILE FUNCTION OPERATIONS ROW: '\(line)'")
                continue
            }
            listed[fields[0] + "  " + fields[1]] = (Set(fields[2].split(separator: ",").map(String.init)), fields[3])
        }
        return listed
    }

    /// The table's rows: `| P3 | ... |` to the row's text.
    static func rows(_ doc: String) -> [String: String] {
        var rows: [String: String] = [:]
        for line in doc.split(separator: "\n") {
            guard line.hasPrefix("| P"), let id = line.split(separator: "|").first?.trimmingCharacters(in: .whitespaces),
                  id.dropFirst().allSatisfy(\.isNumber) else { continue }
            rows[id] = String(line)
        }
        return rows
    }

    @Test("every call site of a privileged system call in Sources is listed with exactly its operations, and nothing listed is gone")
    func everySiteListed() throws {
        let found = try Self.scan()
        let listed = Self.inventory(try Self.doc())
        #expect(found.count > 80, "the scan found only \(found.count) sites: is it still reading Sources?")
        for (site, operations) in found.sorted(by: { $0.key < $1.key }) {
            guard let entry = listed[site] else {
                Issue.record("\(site) makes \(operations.sorted().joined(separator: ",")) and Docs/safety.md's privileged inventory does not name it: add its line (and say what it acts on, what it checks and which co-tenant test attacks it)")
                continue
            }
            #expect(entry.operations == operations, "\(site): the inventory says \(entry.operations.sorted()), the source makes \(operations.sorted())")
        }
        for site in listed.keys.sorted() where found[site] == nil {
            Issue.record("the privileged inventory lists \(site), which no longer makes any of those calls: remove its line")
        }
    }

    @Test("each listed site points at a row that names what it acts on, its check and co-tenant tests that exist")
    func rowsNameTests() throws {
        let doc = try Self.doc()
        let rows = Self.rows(doc)
        let listed = Self.inventory(doc)
        #expect(rows.count >= 8)
        for (site, entry) in listed.sorted(by: { $0.key < $1.key }) where rows[entry.row] == nil {
            Issue.record("\(site) points at row \(entry.row), which the table does not have")
        }
        let tests = try Self.testSources()
        for (id, row) in rows.sorted(by: { $0.key < $1.key }) {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count >= 5, "row \(id) needs: id, sites, acts on, checks first, tested by")
            guard let tested = cells.last else { continue }
            let names = tested.matches(of: /`(\w+)(?:\.(\w+))?`/).map { (String($0.1), $0.2.map(String.init)) }
            #expect(!names.isEmpty, "row \(id) names no test")
            for (suite, test) in names {
                #expect(tests.contains("struct \(suite)"), "row \(id) names the suite \(suite), which Tests/ does not have")
                if let test { #expect(tests.contains("func \(test)("), "row \(id) names the test \(suite).\(test), which Tests/ does not have") }
            }
        }
    }

    @Test("the scan flags a call site it was not told about (a new unlink, chown or rename in a new function)")
    func unlistedSiteFails() throws {
        let planted = """
            extension Sneaky {
                func tidy(_ folder: DirectoryHandle, _ name: FileName) throws {
                    try folder.removeFile(name)
                    try folder.setOwner(0, group: nil)
                    try makeSymlink(name, to: [0x2F])
                    try folder.rename(name, to: other, in: folder, noReplace: true)
                    // try folder.setPermissions(0o777) in a comment is no call
                    let kind = Action.Kind.rename(to: path)
                }
            }
            """
        let found = Self.sites(in: planted, path: "StoragePolicyApply/Sneaky.swift")
        #expect(found == ["StoragePolicyApply/Sneaky.swift  tidy": ["unlink", "chown", "rename", "symlink"]])
        let listed = Self.inventory(try Self.doc())
        #expect(listed["StoragePolicyApply/Sneaky.swift  tidy"] == nil, "so everySiteListed would fail on it")
    }

    static func testSources() throws -> String {
        var all = ""
        let tests = packageRoot + "/Tests"
        let walker = FileManager.default.enumerator(atPath: tests)
        while let relative = walker?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            all += (try? String(contentsOfFile: tests + "/" + relative, encoding: .utf8)) ?? ""
        }
        return all
    }
}
