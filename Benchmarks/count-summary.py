#!/usr/bin/env python3
# One line of noise-free counts for the benchmark scripts' COUNTS=1 mode: the system calls `strace -c -f`
# recorded (all, then the named ones; `a+b` adds two calls up) and the instructions callgrind collected.
#
#   count-summary.py LABEL WIDTH STRACE_FILE CALLGRIND_LOG NAME[+NAME]...
import re
import sys

label, width, strace_file, callgrind_log, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
calls = {}
for line in open(strace_file):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
    elif f and f[-1] == "total":
        calls["total"] = int(f[3 if len(f) >= 5 else 2])
ir = re.search(r"Collected : (\d+)", open(callgrind_log).read())
columns = "".join(f"  {name.split('+')[0]} {sum(calls.get(n, 0) for n in name.split('+')):>7,}" for name in names)
print(f"  {label:{width}s} syscalls {calls.get('total', 0):>9,}{columns}  instructions {int(ir.group(1)) if ir else 0:>15,}")
