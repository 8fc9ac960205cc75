// The command line as main received it, from the initializer in CPosix (Arguments.c), rather than the Swift
// runtime's CommandLine.arguments, which on Linux is read from /proc/self/cmdline and is empty without /proc.
internal import CPosix

package enum ProcessArguments {
    /// argv, `argv[0]` first; nil when it cannot be had (no initializer arguments and no /proc): a caller
    /// must then fail rather than run with none.
    package static let current: [String]? = {
        let argc = cposix_saved_argc()
        if argc > 0 {
            // Decoded as the runtime decodes CommandLine.arguments.
            return (0..<argc).map { i in cposix_saved_argv(i).map { String(cString: $0) } ?? "" }
        }
        // musl passes initializers nothing: the runtime's copy, which has at least argv[0] when it could read it.
        let runtime = CommandLine.arguments
        return runtime.isEmpty ? nil : runtime
    }()

}
