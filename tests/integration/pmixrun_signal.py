#!/usr/bin/env python3
"""Signals to pmixrun's pid alone (what batch systems and `timeout` send) end
the job cleanly: no rank survives, no /dev/shm/pmixpp.fence.<pmixrun pid>.*
segment is left, and pmixrun exits with 128 + the signal's number
(tools/pmixrun/signals.hpp).

usage: pmixrun_signal.py SIGNAME NPROCS -- pmixrun... idle_client [stubborn]
Prints "pmixrun_signal SIGNAME ok"."""
import glob
import os
import signal
import subprocess
import sys

signame, nprocs = sys.argv[1], int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
sig = getattr(signal, signame)
problems = []
signal.alarm(100)  # the bound of every wait below
run = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
pids = []
while len(pids) < nprocs:
    line = run.stdout.readline()
    if not line:
        sys.exit(f"pmixrun_signal: pmixrun ended before {nprocs} ranks were ready")
    if line.startswith("ready "):
        pids.append(int(line.split()[1]))
segments = glob.glob(f"/dev/shm/pmixpp.fence.{run.pid}.*")
if not segments:
    problems.append("the job has no fence segment to check")
run.send_signal(sig)
rc = run.wait()
if rc != 128 + sig:
    problems.append(f"pmixrun exited with {rc}, expected {128 + sig}")
for pid in pids:
    try:
        os.kill(pid, 0)
        problems.append(f"rank pid {pid} survived pmixrun")
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
left = glob.glob(f"/dev/shm/pmixpp.fence.{run.pid}.*")
if left:
    problems.append(f"segments left behind: {left}")
    for path in left:
        os.unlink(path)
for p in problems:
    print("pmixrun_signal: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"pmixrun_signal {signame} ok")
