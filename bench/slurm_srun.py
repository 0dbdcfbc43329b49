#!/usr/bin/env python3
"""Times `srun --mpi=pmix -n N` of an MPI hello under Debian's Slurm 22.05,
with Debian's OpenPMIx and with ours, side by side (bench/README.md, "Slurm").

usage: bench/slurm_srun.py <dir of our libpmix.so.2 and pmix/> [-r ROUNDS] [-n 1,2,4,8,16]

Two private one-node Slurms run at once (tests/dropin/slurm/slurm_cluster.py:
own munged, slurmctld, slurmd, ports and directories): one with Debian's
OpenPMIx as installed, one with our library and components bind-mounted over
it in its slurmd's mount namespace. Each has one oversubscribed allocation;
every measurement is one job step of it, `srun --jobid=J --mpi=pmix -O -n N
mpi_hello hello` (tests/dropin/slurm/mpi_exchange.c: MPI_Init, MPI_Finalize),
timed from srun's start to its exit. Rounds alternate which variant goes
first; within a round every N runs for both. Prints each step's time and a
table of medians. Needs root (as the drop-in test). Not a test: nothing is
asserted on; a step that fails is reported and left out.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SLURM_TESTS = os.path.join(HERE, "..", "tests", "dropin", "slurm")
sys.path.insert(0, SLURM_TESTS)
import slurm_cluster  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("libdir")
    ap.add_argument("-r", "--rounds", type=int, default=5)
    ap.add_argument("-n", "--sizes", default="1,2,4,8,16")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    why = slurm_cluster.cannot_run()
    if why:
        sys.exit("slurm_srun.py: cannot run: " + why)

    work = tempfile.mkdtemp(prefix="pmixpp_slurm_bench.")
    hello = os.path.join(work, "mpi_hello")
    subprocess.run(["mpicc", "-O2", os.path.join(SLURM_TESTS, "mpi_exchange.c"), "-o", hello],
                   check=True)
    times = {(v, n): [] for v in ("openpmix", "ours") for n in sizes}
    try:
        with slurm_cluster.Cluster(libdir=None) as deb, \
                slurm_cluster.Cluster(libdir=os.path.abspath(args.libdir)) as ours:
            clusters = {"openpmix": deb, "ours": ours}
            jobs = {v: c.allocate(max(sizes)) for v, c in clusters.items()}
            # One untimed step each: the first start-up reads files from disk.
            for v, c in clusters.items():
                step(c, jobs[v], 1, hello)
            for rnd in range(args.rounds):
                order = ["openpmix", "ours"] if rnd % 2 == 0 else ["ours", "openpmix"]
                for n in sizes:
                    for v in order:
                        t, ok, lib = step(clusters[v], jobs[v], n, hello)
                        print(f"round {rnd + 1} {v:8} n={n:2}: {t * 1000:7.1f} ms"
                              f"{'' if ok else '  FAILED (left out)'}  libpmix {lib}", flush=True)
                        if ok:
                            times[(v, n)].append(t)
            for v, c in clusters.items():
                c.release(jobs[v])
    finally:
        subprocess.run(["rm", "-rf", work])

    print(f"\nmedian over {args.rounds} rounds (ms), srun --mpi=pmix -n N mpi_hello, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| N | OpenPMIx 4.2.2 | ours | ours / OpenPMIx |")
    print("|---|---|---|---|")
    for n in sizes:
        d, o = times[("openpmix", n)], times[("ours", n)]
        if d and o:
            md, mo = statistics.median(d), statistics.median(o)
            print(f"| {n} | {md * 1000:.0f} | {mo * 1000:.0f} | {mo / md:.2f} |")
        else:
            print(f"| {n} | {'-' if not d else ''} | {'-' if not o else ''} | |")


def step(cluster, job, n, hello):
    """(seconds, all ranks reported, the libpmix identity rank 0 reported)."""
    t0 = time.perf_counter()
    r = cluster.run(["srun", f"--jobid={job}", "--mpi=pmix", "-O", "-n", str(n), hello, "hello"],
                    timeout=120)
    t = time.perf_counter() - t0
    lines = [l for l in r.stdout.splitlines() if l.startswith("rank ")]
    lib = lines[0].split()[5] if lines else "?"
    return t, r.returncode == 0 and len(lines) == n, lib


if __name__ == "__main__":
    main()
