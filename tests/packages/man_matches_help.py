#!/usr/bin/env python3
"""packages.man_pages_match_help: docs/man/<program>.1 documents every option the
program's --help lists, names no option --help lacks, and carries the version
the program's --version prints.

    man_matches_help.py <program> <man page>
"""
import re
import subprocess
import sys

program, page = sys.argv[1], sys.argv[2]
name = program.rsplit("/", 1)[-1]
errors = []


def run(*args):
    p = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"FAIL: {name} {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


option_re = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
helped = set()
for line in run("--help").splitlines():
    m = re.match(r"^\s+(-.*?)(?:\s{2,}|$)", line)
    if m:
        helped.update(option_re.findall(m.group(1)))
if not helped:
    sys.exit(f"FAIL: no option found in {name} --help")

roff = open(page, encoding="utf-8").read()
text = roff.replace("\\-", "-")
text = re.sub(r"\\f[BIRP]", "", text)
documented = set()
for line in text.splitlines():
    if line.startswith((".B ", ".BR ", ".BI ", ".RB ")):
        documented.update(option_re.findall(line))

for o in sorted(helped - documented):
    errors.append(f"{name} --help lists {o}, {page} does not")
for o in sorted(documented - helped):
    errors.append(f"{page} documents {o}, {name} --help does not list it")

th = re.search(r'^\.TH \S+ 1 "[^"]*" "\S+ (\S+)"', roff, re.M)
version_line = run("--version").splitlines()[0]
m = re.match(rf"^{re.escape(name)} \(pmixpp\) (\S+)$", version_line)
if not th:
    errors.append(f"{page}: no .TH line with the version")
elif not m:
    errors.append(f"{name} --version: first line '{version_line}' is not '{name} (pmixpp) <version>'")
elif th.group(1) != m.group(1):
    errors.append(f"{page} is for version {th.group(1)}, {name} --version says {m.group(1)}")

if errors:
    sys.exit("FAIL:\n  " + "\n  ".join(errors))
print(f"PASS: {name}: options {sorted(helped)} documented; version {m.group(1)}")
