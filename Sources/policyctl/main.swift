// policyctl's entry point: everything happens in PolicyctlCommands (Policyctl.main); this file only exits with its code.
// Policyctl.main() takes the arguments main received (saved by CPosix before main), which work without /proc.
import PolicyctlCommands

Policyctl.exit(Policyctl.main())
