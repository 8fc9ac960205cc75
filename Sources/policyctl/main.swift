// policyctl's entry point: everything happens in Policyctl.main; this file only exits with its code.

exit(Policyctl.main(CommandLine.arguments))
