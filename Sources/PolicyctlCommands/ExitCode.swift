// The exit codes policyctl promises (DESIGN.md): findings are never confused with configuration errors.

enum ExitCode: Int32 {
    /// Success; nothing found.
    case success = 0
    /// `audit` found violations.
    case findings = 1
    /// `plan --detailed-exitcode`: changes are pending.
    case changesPending = 2
    /// An apply failed and was rolled back.
    case rolledBack = 3
    /// The command line was wrong (EX_USAGE).
    case usage = 64
    /// A policy is invalid (EX_DATAERR).
    case invalidPolicy = 65
    /// A Swift policy cannot be compiled here: no toolchain, or no library to link (EX_UNAVAILABLE).
    case unavailable = 69
    /// policyctl cannot run at all: its own command line cannot be had (EX_SOFTWARE).
    case software = 70
    /// An I/O or system error (EX_IOERR).
    case ioError = 74
}
