#!/usr/bin/env python3
"""docs/status.md must list every exported PMIx_* function exactly once, with a
state, and name the programs that import it.

Usage: check_status_doc.py <status.md> <pmix42_functions.txt> <libpmix.so.2>
The function list (tests/conformance/abi/pmix42_functions.txt) is checked
against the built library too, so a function added to the library without a
line in the doc (or the reverse) fails the test. The "imported by" column must
name the consumers that file gives the function, in its order ("—" for none)."""
import re
import subprocess
import sys

doc, functions, lib = sys.argv[1:4]
listed = {}
for line in open(doc, encoding="utf-8"):
    m = re.match(r"\|\s*`(PMIx_\w+)`\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|", line)
    if m:
        listed.setdefault(m.group(1), []).append((m.group(2), m.group(3)))

consumers, expected = {}, {}
for line in open(functions, encoding="utf-8").read().splitlines():
    words = line.split()
    if len(words) >= 3 and words[0] == "consumer":
        consumers[words[1]] = " ".join(words[2:])
    elif len(words) >= 2 and words[0] == "function":
        expected[words[1]] = ", ".join(consumers[t] for t in words[2:]) or "—"
if not expected:
    sys.exit(f"{functions}: no function lines")

nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
exported = {l.split()[-1] for l in nm.stdout.splitlines() if l.split()[-1].startswith("PMIx_")}

errors = []
for f in sorted(set(expected) | exported):
    if f not in listed:
        errors.append(f"{f}: exported/expected but not listed in {doc}")
    elif len(listed[f]) > 1:
        errors.append(f"{f}: listed {len(listed[f])} times")
    elif not listed[f][0][0]:
        errors.append(f"{f}: no state given")
    elif f in expected and listed[f][0][1] != expected[f]:
        errors.append(f"{f}: imported by '{listed[f][0][1]}' in the doc, '{expected[f]}' in {functions}")
for f in sorted(set(listed) - set(expected) - exported):
    errors.append(f"{f}: listed but neither expected nor exported")
for e in errors:
    print(e)
print(f"{len(listed)} functions listed, {len(errors)} problems")
sys.exit(1 if errors else 0)
