// `policyctl CMD --policy cleanup.swift`: compiles the script with a generated entry point against
// libPolicyctlScripting (once; the executable is cached by a key over everything it was built from) and
// replaces this process with it, so output, exit codes, the journal and the lock are the command's own.
// Trust: policyctl runs as root from timers, so the script must be writable by no one but its owner (you
// or root), and the cache folder, each build in it and each executable must be owned by this euid and
// writable by no one else, checked with fstat on descriptors opened O_NOFOLLOW; the executable that runs is
// the very file checked (fexecve). A build is made in a private temporary folder and renamed into place.
import StoragePolicy

/// The options of a command that may name a Swift policy (each has `--cache-dir`), as ScriptLauncher reads
/// them before the command itself runs.
protocol ScriptPolicyOptions {
    /// `--policy`; nil when not given (or the command has no such option).
    var policy: String? { get }
    /// `--cache-dir`.
    var cacheDir: String? { get }
    /// Policy files named as arguments (validate's); a `.swift` one among them is compiled.
    var policyFiles: [String] { get }
    /// A saved plan named as an argument (apply's): this user's record of it may name a `.swift` policy.
    var savedPlan: String? { get }
}

extension ScriptPolicyOptions {
    var policyFiles: [String] { [] }
    var savedPlan: String? { nil }
}

enum ScriptLauncher {
    /// `--cache-dir DIR`, on every command that takes a policy.
    static let cacheDirOption = OptionSpec.option(
        "cache-dir", value: "dir",
        help: "Where .swift policies are compiled to (default: $XDG_CACHE_HOME/policyctl/scripts, else ~/.cache/policyctl/scripts); created 0700, and refused unless owned by you and writable by no one else.",
        completion: .directory)

    /// The environment variable naming the policyctl that compiled a policy (for `schedule`'s units), set
    /// for the compiled program only.
    static let hostVariable = "POLICYCTL_SCRIPT_HOST"

    /// Inside a compiled policy: the policyctl that compiled and ran it (what `schedule`'s units run).
    static var hostExecutable: String? {
        ScriptContext.current == nil ? nil : ScheduleCommand.environment(hostVariable)
    }

    /// When `options` name a Swift policy and this is `policyctl` itself (not a compiled policy): compiles it
    /// if needed and runs it in this process's place with `argv`. Returns only with an exit code when that
    /// could not be done; nil when the command names no Swift policy.
    static func intercept(_ options: any ScriptPolicyOptions, argv: [String]) -> Int32? {
        guard ScriptContext.current == nil, let script = scriptPath(options) else { return nil }
        // Each script is a program of its own: one per call.
        if options.policyFiles.filter(PolicySource.isScript).count > 1 {
            Terminal.err("Error: validate one .swift policy per call (each is compiled into a program of its own); YAML policies may join it")
            return ExitCode.usage.rawValue
        }
        do {
            try launch(script, cacheOption: options.cacheDir, argv: argv)
        } catch {
            if !error.message.isEmpty { Terminal.err("Error: \(error.message)") }
            return error.code.rawValue
        }
    }

    /// The Swift policy a command line names: `--policy X.swift`, validate's one argument, or the policy
    /// this user's record of a saved plan names (never the plan file's own word: it carries no authority).
    static func scriptPath(_ options: any ScriptPolicyOptions) -> String? {
        if let policy = options.policy { return PolicySource.isScript(policy) ? policy : nil }
        if let script = options.policyFiles.first(where: PolicySource.isScript) { return script }
        // A peek whose failure is ignored (apply itself reads the plan and reports any error).
        guard let planFile = options.savedPlan,
              let record = FaultInjection.uncounted({ () -> PlanRecord? in
                  // The record is keyed by the plan's bytes: no need to decode them here (apply does).
                  guard let bytes = try? TrustedFile.read(planFile, limit: PlanFile.sizeLimit, what: "plan file") else { return nil }
                  return try? PlanRecords.lookup(bytes)
              }) else { return nil }
        return PolicySource.isScript(record.policyPath) ? record.policyPath : nil
    }

    static func launch(_ script: String, cacheOption: String?, argv: [String]) throws(CommandFailure) -> Never {
        let bytes = try ScriptFile.read(script)
        let toolchain = try ScriptToolchain.find(for: script)
        let library = try ScriptLibrary.find(for: script)
        try library.check(toolchain, for: script)
        let identity = ScriptIdentity(sha256: SHA256.hex(bytes))
        let key = SHA256.hex(Array(("policyctl script cache 1\0" + identity.sha256 + "\0" + StoragePolicyVersion.tool + "\0"
            + toolchain.version + "\0" + library.identity).utf8))
        let cache = try ScriptCache.open(cacheOption)
        defer { system_close(cache.fd) }
        var program = try cache.program(key)
        if program == nil {
            Terminal.err("policyctl: compiling \(script) (cached in \(cache.path)/\(key))")
            try cache.build(key) { folder throws(CommandFailure) in
                let source = ScriptEntryPoint.source(script: script, bytes: bytes, identity: identity)
                try ScriptCache.writeFile(folder + "/main.swift", source)
                let status = ScriptProcess.run([toolchain.swiftc, folder + "/main.swift", "-o", folder + "/policy",
                                                "-module-name", "PolicyScript", "-diagnostic-style", "llvm"] + library.flags)
                guard status == 0 else {
                    throw CommandFailure(code: .invalidPolicy, message: "\(script) did not compile (swiftc exit \(status)); nothing was done")
                }
            }
            program = try cache.program(key)
        }
        guard let fd = program else {
            throw CommandFailure(code: .ioError, message: "\(cache.path)/\(key)/policy: missing after the build")
        }
        if let host = ScheduleCommand.executablePath() { system_setenv(hostVariable, host) }
        let e = system_fexecve(fd, argv)
        throw CommandFailure(code: .ioError, message: "cannot run \(cache.path)/\(key)/policy: \(e)")
    }
}

/// The script's bytes, read under the trust rule (TrustedFile): a regular file of at most 16 MiB that it and
/// every folder above it are owned by this euid or root and writable by no one else (root would otherwise
/// compile and run a co-tenant's code).
enum ScriptFile {
    static func read(_ path: String) throws(CommandFailure) -> [UInt8] {
        do {
            return try TrustedFile.read(path, limit: PolicyLoader.maximumFileSize, what: "Swift policy (a program run as uid \(system_geteuid()))")
        } catch {
            switch error {
            case .io(let e): throw CommandFailure(code: .ioError, message: "cannot read policy '\(path)': \(e.errno)")
            case .notRegular: throw CommandFailure(code: .invalidPolicy, message: "\(path): not a regular file; a Swift policy is a .swift file")
            case .tooLarge(_, let size, _):
                throw CommandFailure(code: .invalidPolicy, message: "\(path): \(size) bytes; a policy may have at most \(PolicyLoader.maximumFileSize)")
            case .untrusted(let u): throw CommandFailure(code: .invalidPolicy, message: u.description)
            }
        }
    }
}

/// The generated main.swift: the script under its own name (so swiftc reports `cleanup.swift:LINE:COL`),
/// then an entry point calling the command layer with the script's top-level `policy`.
enum ScriptEntryPoint {
    static func source(script: String, bytes: [UInt8], identity: ScriptIdentity) -> [UInt8] {
        var text = Array("#sourceLocation(file: \(literal(script)), line: 1)\n".utf8)
        text += bytes
        if bytes.last != 0x0A { text.append(0x0A) }
        text += Array("""
            #sourceLocation(file: "<policyctl's entry point>", line: 1)
            // A Swift policy declares `let policy = try Policy(...)` or `func policy() throws -> Policy` (Docs/scripting.md).
            import PolicyctlCommands
            Policyctl.exit(Policyctl.main(CommandLine.arguments, scriptPolicy: policy, script: ScriptIdentity(sha256: "\(identity.sha256)")))

            """.utf8)
        return text
    }

    /// A Swift string literal for any path: quotes, backslashes and control characters escaped.
    static func literal(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
