#!/usr/bin/env python3
"""Writes Docs/policy.schema.json from `policyctl schema`, which builds the schema from the rule kinds' definitions
(Sources/PolicyctlCommands/PolicySchema.swift and each Sources/StoragePolicyModel/Policy/Kinds/<Kind>Syntax.swift).
Run after changing them; a test fails when the file and `policyctl schema` differ by a byte. The name is historical:
the schema was once written by hand and embedded into the Swift source by this script."""
import os, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
text = subprocess.run(["swift", "run", "--package-path", root, "policyctl", "schema"],
                      check=True, capture_output=True, text=True).stdout
if not text.endswith("\n") or text.endswith("\n\n"):
    sys.exit("policyctl schema must end with exactly one newline")
open(os.path.join(root, "Docs", "policy.schema.json"), "w", encoding="utf-8").write(text)
print("wrote Docs/policy.schema.json")
