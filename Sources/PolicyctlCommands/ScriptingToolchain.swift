// What compiling a Swift policy needs, found in one place: swiftc (POLICYCTL_SWIFTC, else PATH) with its
// version, and libPolicyctlScripting with its modules, beside the running policyctl (the build folder) or
// in PREFIX/lib/policyctl (make install, the .deb). Missing either is exit 69 (EX_UNAVAILABLE), saying what
// to install.
import StoragePolicy

struct ScriptToolchain {
    /// swiftc, absolute.
    var swiftc: String
    /// `swiftc --version`'s output: part of the cache key, so a new compiler rebuilds.
    var version: String

    static func find(for script: String) throws(CommandFailure) -> ScriptToolchain {
        let install = "install the Swift toolchain that built policyctl (swift.org/install, or the distribution's swiftlang package) and put its usr/bin on PATH, or set POLICYCTL_SWIFTC to its swiftc"
        var candidates: [String] = []
        if let explicit = ScheduleCommand.environment("POLICYCTL_SWIFTC") {
            candidates = [explicit]
        } else {
            candidates = (ScheduleCommand.environment("PATH") ?? "").split(separator: ":").map { "\($0)/swiftc" }
        }
        guard let swiftc = candidates.first(where: { $0.hasPrefix("/") && system_isExecutable($0) }) else {
            let looked = ScheduleCommand.environment("POLICYCTL_SWIFTC").map { "POLICYCTL_SWIFTC=\($0) is not an executable" } ?? "no swiftc on PATH"
            throw CommandFailure(code: .unavailable, message: "cannot compile \(script): \(looked); \(install)")
        }
        let (status, output) = ScriptProcess.capture([swiftc, "--version"])
        guard status == 0, !output.isEmpty else {
            throw CommandFailure(code: .unavailable, message: "cannot compile \(script): '\(swiftc) --version' failed (exit \(status)); \(install)")
        }
        return ScriptToolchain(swiftc: swiftc, version: output)
    }
}

/// libPolicyctlScripting.so and the modules a script imports (StoragePolicy, PolicyctlCommands), and the
/// C modules StoragePolicy still imports publicly (CPosix, CYAML: clients need their module maps until they
/// are `internal import`).
struct ScriptLibrary {
    static let name = "PolicyctlScripting"
    /// The modules a script's `import StoragePolicy` loads: the front door, the layers it re-exports, and the
    /// command layer. Each is part of the cache key, so a rebuilt layer recompiles the script.
    static let modules = ["StoragePolicyFileSystem", "StoragePolicyModel", "StoragePolicyPlan", "StoragePolicyEvaluation",
                          "StoragePolicyApply", "StoragePolicyReports", "StoragePolicy", "PolicyctlCommands"]
    /// The folder holding lib<name>.so.
    var directory: String
    /// swiftc's flags to import and link it (and to find it at run time: rpath).
    var flags: [String]
    /// Changes whenever the library or its modules are rebuilt: part of the cache key.
    var identity: String
    /// The compiler that built the modules (`Swift version 6.3.1 (swift-6.3.1-RELEASE)`), as the module
    /// records it; only that compiler can import them (no library evolution).
    var builtBy: String?

    /// Refuses a swiftc other than the one that built the library, before it fails on the modules (69).
    func check(_ toolchain: ScriptToolchain, for script: String) throws(CommandFailure) {
        guard let builtBy, !toolchain.version.contains(builtBy) else { return }
        let found = toolchain.version.split(separator: "\n").first.map(String.init) ?? toolchain.version
        throw CommandFailure(code: .unavailable, message: "cannot compile \(script): policyctl's library was built by '\(builtBy)', and \(toolchain.swiftc) is '\(found)'; a Swift policy needs the very compiler that built policyctl: install that toolchain and put it on PATH or set POLICYCTL_SWIFTC to its swiftc")
    }

    /// The `Swift version ...)` string in the first 64 KiB of a module file (its control block).
    static func compilerVersion(ofModule path: String) -> String? {
        let fd = system_open(path, [.readOnly, .closeOnExec])
        guard fd >= 0 else { return nil }
        defer { system_close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { system_read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let needle = Array("Swift version ".utf8)
        var i = 0
        while i + needle.count <= n {
            if buffer[i] == needle[0], Array(buffer[i..<(i + needle.count)]) == needle,
               let end = buffer[i..<n].firstIndex(of: UInt8(ascii: ")")) {
                return String(decoding: buffer[i...end], as: UTF8.self)
            }
            i += 1
        }
        return nil
    }

    static func find(for script: String) throws(CommandFailure) -> ScriptLibrary {
        let exe = Subprocess.selfPath
        let bin = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        // The build folder (.build/<triple>/<config>: the .so beside policyctl, modules in Modules/), then
        // the installed layout (PREFIX/bin/policyctl, PREFIX/lib/policyctl/{lib*.so,Modules,include}).
        for directory in [bin, bin + "/../lib/policyctl"] {
            let library = directory + "/lib\(name).so"
            let modules = directory + "/Modules"
            guard exists(library), exists(modules + "/PolicyctlCommands.swiftmodule") else { continue }
            var flags = ["-I", modules, "-L", directory, "-l\(name)", "-Xlinker", "-rpath", "-Xlinker", directory]
            for cModule in [directory + "/include/CPosix", directory + "/include/CYAML",       // installed
                            directory + "/CPosix.build", directory + "/../../../Sources/CYAML"]   // build folder
            where exists(cModule + "/module.modulemap") {
                flags += ["-I", cModule]
            }
            let parts = ([library] + ScriptLibrary.modules.map { modules + "/\($0).swiftmodule" }).map { path in
                // A path that cannot be stat'ed counts as all zeros (it then fails to load, named by swiftc).
                let st = system_stat(path)
                return "\(path):\(st?.device ?? 0):\(st?.inode ?? 0):\(st?.size ?? 0):\(st?.modified.seconds ?? 0).\(st?.modified.nanoseconds ?? 0)"
            }
            return ScriptLibrary(directory: directory, flags: flags, identity: parts.joined(separator: "\0"),
                                 builtBy: compilerVersion(ofModule: modules + "/PolicyctlCommands.swiftmodule"))
        }
        throw CommandFailure(code: .unavailable, message: "cannot compile \(script): policyctl's library for Swift policies (lib\(name).so and its Modules/) is not beside \(exe) nor in \(bin)/../lib/policyctl; build it with `swift build --product \(name)` or reinstall (make install, or the .deb)")
    }

    private static func exists(_ path: String) -> Bool { system_exists(path) }
}

/// swiftc as a child process: with stderr inherited (its diagnostics go straight to the user; its stdout
/// joins them), or with its output captured (`--version`).
enum ScriptProcess {
    static func run(_ argv: [String]) -> Int32 { spawn(argv, capture: nil) }

    static func capture(_ argv: [String]) -> (Int32, String) {
        guard let fds = system_pipe() else { return (127, "") }
        var output: [UInt8] = []
        let status = spawn(argv, capture: (fds.write, {
            system_close(fds.write)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { system_read(fds.read, $0.baseAddress, $0.count) }
                if n < 0 && system_errno == .interrupted { continue }
                if n <= 0 { break }
                output += buffer[0..<n]
            }
            system_close(fds.read)
        }))
        return (status, String(decoding: output, as: UTF8.self))
    }

    private static func spawn(_ argv: [String], capture: (fd: Int32, drain: () -> Void)?) -> Int32 {
        // Captured, both go into the pipe; else whatever swiftc says goes to stderr: stdout stays the
        // command's (`--format json`).
        let redirecting: [(from: Int32, to: Int32)] = if let capture { [(capture.fd, 1), (capture.fd, 2)] } else { [(2, 1)] }
        let spawned = system_spawn(argv, environment: nil, redirecting: redirecting)
        capture?.drain()
        guard let pid = spawned else { return 127 }
        var status: Int32 = 0
        while true {
            if let s = system_waitpid(pid) { status = s; break }
            if system_errno != .interrupted { break }
        }
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }
}
