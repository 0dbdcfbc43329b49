#!/usr/bin/env python3
"""docs/status.md must list every exported PMIx_* function exactly once, with a state.

Usage: check_status_doc.py <status.md> <pmix_symbols_usage.tsv> <libpmix.so.2>
The symbol list is checked against the built library too, so a function added
to the library without a line in the doc (or the reverse) fails the test."""
import re
import subprocess
import sys

doc, tsv, lib = sys.argv[1:4]
listed = {}
for line in open(doc, encoding="utf-8"):
    m = re.match(r"\|\s*`(PMIx_\w+)`\s*\|\s*([^|]+?)\s*\|", line)
    if m:
        listed.setdefault(m.group(1), []).append(m.group(2))
expected = {l.split("\t")[0] for l in open(tsv, encoding="utf-8").read().splitlines()[1:] if l}
nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
exported = {l.split()[-1] for l in nm.stdout.splitlines() if l.split()[-1].startswith("PMIx_")}

errors = []
for f in sorted(expected | exported):
    if f not in listed:
        errors.append(f"{f}: exported/expected but not listed in {doc}")
    elif len(listed[f]) > 1:
        errors.append(f"{f}: listed {len(listed[f])} times")
    elif not listed[f][0]:
        errors.append(f"{f}: no state given")
for f in sorted(set(listed) - expected - exported):
    errors.append(f"{f}: listed but neither expected nor exported")
for e in errors:
    print(e)
print(f"{len(listed)} functions listed, {len(errors)} problems")
sys.exit(1 if errors else 0)
