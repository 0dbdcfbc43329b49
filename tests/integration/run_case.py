#!/usr/bin/env python3
"""Runs one pmixrun job and checks its exit status and output.

usage: run_case.py [--rc N | --nonzero] [--count REGEX N]... [--count-stderr REGEX N]...
                   [--env NAME=VALUE]... -- command...
--count: the number of stdout lines matching REGEX must be exactly N;
--count-stderr: the same for stderr lines.
Every wait is bounded by the ctest TIMEOUT of the test and pmixrun's --timeout."""
import os
import re
import subprocess
import sys

args = sys.argv[1:]
expect_rc, nonzero, counts, err_counts, env = 0, False, [], [], dict(os.environ)
while args and args[0] != "--":
    a = args.pop(0)
    if a == "--rc":
        expect_rc = int(args.pop(0))
    elif a == "--nonzero":
        nonzero = True
    elif a == "--count":
        counts.append((re.compile(args.pop(0)), int(args.pop(0))))
    elif a == "--count-stderr":
        err_counts.append((re.compile(args.pop(0)), int(args.pop(0))))
    elif a == "--env":
        name, _, value = args.pop(0).partition("=")
        env[name] = value
    else:
        sys.exit(f"run_case.py: unknown option {a}")
cmd = args[1:]
proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
problems = []
if nonzero:
    if proc.returncode == 0:
        problems.append("expected a non-zero exit status, got 0")
elif proc.returncode != expect_rc:
    problems.append(f"expected exit status {expect_rc}, got {proc.returncode}")
lines = proc.stdout.splitlines()
for regex, n in counts:
    got = sum(1 for l in lines if regex.search(l))
    if got != n:
        problems.append(f"expected {n} output lines matching {regex.pattern!r}, got {got}")
err_lines = proc.stderr.splitlines()
for regex, n in err_counts:
    got = sum(1 for l in err_lines if regex.search(l))
    if got != n:
        problems.append(f"expected {n} stderr lines matching {regex.pattern!r}, got {got}")
for p in problems:
    print("run_case.py: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
