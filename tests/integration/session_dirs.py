#!/usr/bin/env python3
"""pmixrun's temporary directories (tools/pmixrun/session_dirs.hpp).

usage: session_dirs.py N -- pmixrun... session_dirs_client
Runs the job with TMPDIR set to a fresh directory: every rank must print
"session_dirs ok rank R <tmpdir> <nsdir> <procdir>" with one session and one
job directory for all and a folder of its own, the session directory under
that TMPDIR; once pmixrun has exited none of them may exist."""
import os
import shutil
import subprocess
import sys
import tempfile

n = int(sys.argv[1])
cmd = sys.argv[sys.argv.index("--") + 1:]
base = tempfile.mkdtemp(prefix="pmixpp-session-dirs-")
env = dict(os.environ, TMPDIR=base)
problems = []
try:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        problems.append(f"pmixrun exited with {proc.returncode}")
    seen = [l.split()[4:] for l in proc.stdout.splitlines() if l.startswith("session_dirs ok rank ")]
    if len(seen) != n:
        problems.append(f"{len(seen)} ranks reported their directories, want {n}")
    elif len({s[0] for s in seen}) != 1 or len({s[1] for s in seen}) != 1:
        problems.append("the ranks disagree on PMIX_TMPDIR or PMIX_NSDIR")
    elif len({s[2] for s in seen}) != n:
        problems.append("two ranks share a PMIX_PROCDIR")
    elif os.path.dirname(seen[0][0]) != base:
        problems.append(f"PMIX_TMPDIR {seen[0][0]} is not in TMPDIR {base}")
    for s in seen:
        for path in s:
            if os.path.exists(path):
                problems.append(f"{path} is still there after pmixrun exited")
finally:
    shutil.rmtree(base, ignore_errors=True)
for p in problems:
    print("session_dirs.py: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
