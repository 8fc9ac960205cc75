// policyctl's entry point: everything happens in PolicyctlCommands (Policyctl.main); this file only exits with its code.
import PolicyctlCommands

exit(Policyctl.main(CommandLine.arguments))
