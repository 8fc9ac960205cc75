// policyctl's entry point: everything happens in Policyctl.main; this file only exits with its code.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(Policyctl.main(CommandLine.arguments))
