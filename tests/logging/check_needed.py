#!/usr/bin/env python3
"""usage: check_needed.py LIBPMIX EMAIL_COMPONENT
libcurl is a dependency of the plog_email component only: fails when
LIBPMIX's ELF NEEDED list names libcurl, or (so that the check is known to
see it) when the email component's does not."""
import re
import subprocess
import sys


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


core, email = sys.argv[1], sys.argv[2]
problems = []
if any(n.startswith("libcurl") for n in needed(core)):
    problems.append(f"{core} needs libcurl: {needed(core)}")
if not any(n.startswith("libcurl") for n in needed(email)):
    problems.append(f"{email} does not need libcurl ({needed(email)}): the check cannot see it")
for p in problems:
    print("check_needed.py: " + p, file=sys.stderr)
print("NEEDED of libpmix:", ", ".join(needed(core)))
sys.exit(1 if problems else 0)
