// policyctl's entry point: everything happens in PolicyctlCommands (Policyctl.main); this file only exits with its code.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PolicyctlCommands

exit(Policyctl.main(CommandLine.arguments))
