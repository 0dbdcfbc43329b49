#!/usr/bin/env python3
"""dropin.slurm_srun_pmix: Debian's Slurm 22.05 runs `srun --mpi=pmix` job
steps with our libpmix.so.2 on both sides, slurmstepd's PMIx server (Slurm's
mpi/pmix_v4 plugin) and the tasks (docs/dropin.md, "Slurm").

usage: slurm_pmix.py <dir of our libpmix.so.2 and pmix/> <examples' hello> <modex_client>
                     <abort_client> [--keep-logs DIR]
(the last two: tests/integration's PMIx clients, built on our library)

Sets up a private one-node Slurm (slurm_cluster.py): munged, slurmctld and
slurmd with their configuration, state and sockets in a temporary directory,
slurmd in a private mount namespace with our library and components
bind-mounted over Debian's OpenPMIx. Every check names itself PASS or FAIL;
then "N passed, N failed". Exit 77 (ctest SKIP_RETURN_CODE) with the reason
when it cannot run here: not root, no mount namespace, Slurm not installed.

Checks, all job steps of one allocation except the last:
  mpi_hello_n{1,2,4,16}  MPI_Init/Finalize (16: oversubscribed): every rank
                         and its slurmstepd map our library file (device and
                         inode in /proc/<pid>/maps: a bind mount keeps
                         Debian's path there), over usock
  mpi_exchange_n{2,4}    ring sendrecv, isend/irecv, allreduce, bcast,
                         allgather, a split communicator's allreduce
  pmix_hello_n{1,4}      examples/hello, a plain PMIx client: Put, Commit,
                         Fence with data, Get of every peer's greeting
  abort_rc7              MPI_Abort(7) on rank 1 of 4: the step ends, srun
                         exits with 7
  pmix_abort_rc7         the same with PMIx_Abort(7) of a plain PMIx client
  two_steps              two steps one after the other after that, each its
                         own namespace (slurm.pmix.<job>.<step>), both right
  tcp_forced             slurmd (so slurmstepd's server) and the tasks with
                         PMIX_MCA_ptl=tcp: the server URI is tcp, exchange
                         on 4 ranks
  two_nodes_*            two slurmds on this host (two Slurm nodes), steps of
                         4 ranks across both: fence with data (Slurm's
                         fence_nb upcall), Gets without a collecting fence
                         (its direct_modex upcall and the other node's
                         PMIx_server_dmodex_request), the MPI exchange over
                         Open MPI's TCP transport on the loopback
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import slurm_cluster  # noqa: E402

SKIP = 77


def file_id(path):
    """The "maj:min:inode" /proc/<pid>/maps gives a mapping of this file."""
    st = os.stat(path)
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


class Checks:
    def __init__(self, cluster, ours):
        self.cluster, self.ours = cluster, ours
        self.passed, self.failed = 0, 0

    def report(self, name, problems, result=None):
        if problems:
            self.failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
            if result is not None:
                print(f"--- {name}: status {result.returncode}\n--- stdout\n{result.stdout}"
                      f"--- stderr\n{result.stderr}")
                print("--- slurmd.log (tail)\n" + self.cluster.log_tail(f"slurmd.{self.cluster.node}.log"))
        else:
            self.passed += 1
            print(f"PASS {name}")
        sys.stdout.flush()


RANK_LINE = re.compile(r"^rank (\d+) of (\d+): self (\S+) parent (\S+) uri (\S+) ns (\S+)$")


def check_ranks(result, n, ours, scheme):
    """The problems with an mpi_exchange step's result, and its namespaces."""
    problems, namespaces = [], set()
    if result.returncode != 0:
        problems.append(f"srun exit status {result.returncode}, want 0")
    ranks = {}
    for line in result.stdout.splitlines():
        m = RANK_LINE.match(line)
        if m:
            ranks[int(m.group(1))] = m
    if sorted(ranks) != list(range(n)):
        problems.append(f"ranks reporting: {sorted(ranks)}, want 0..{n - 1}")
    for r, m in sorted(ranks.items()):
        if int(m.group(2)) != n:
            problems.append(f"rank {r} sees a job of {m.group(2)}")
        if m.group(3) != ours:
            problems.append(f"rank {r} mapped {m.group(3)}, not our library ({ours})")
        if m.group(4) != ours:
            problems.append(f"rank {r}'s slurmstepd mapped {m.group(4)}, not ours ({ours})")
        if m.group(5) != scheme:
            problems.append(f"rank {r} was given a {m.group(5)} server URI, want {scheme}")
        namespaces.add(m.group(6))
    return problems, namespaces


def main():
    args = sys.argv[1:]
    keep_logs = None
    if "--keep-logs" in args:
        i = args.index("--keep-logs")
        keep_logs = args[i + 1]
        del args[i:i + 2]
    if len(args) != 4:
        sys.exit(__doc__)
    libdir = os.path.abspath(args[0])
    hello, modex_client, abort_client = (os.path.abspath(a) for a in args[1:])
    for need in (os.path.join(libdir, "libpmix.so.2"), os.path.join(libdir, "pmix"), hello,
                 modex_client, abort_client):
        if not os.path.exists(need):
            sys.exit(f"slurm_pmix.py: {need} does not exist")
    why = slurm_cluster.cannot_run()
    if why:
        print("SKIP: " + why)
        return SKIP

    build = tempfile.mkdtemp(prefix="pmixpp_slurm_progs.")
    try:
        progs = {}
        for name, src in (("mpi_exchange", os.path.join(HERE, "mpi_exchange.c")),
                          ("abort_seven", os.path.join(HERE, "..", "mpi", "abort_seven.c"))):
            progs[name] = os.path.join(build, name)
            cc = subprocess.run(["mpicc", "-O1", "-Wall", "-Werror", src, "-o", progs[name]],
                                capture_output=True, text=True)
            if cc.returncode != 0:
                print(f"slurm_pmix.py: cannot build {src}:\n{cc.stderr}")
                return 1
        progs.update(hello=hello, modex_client=modex_client, abort_client=abort_client)
        ours = file_id(os.path.join(libdir, "libpmix.so.2"))
        with slurm_cluster.Cluster(libdir=libdir, keep_logs=keep_logs) as c:
            checks = Checks(c, ours)
            run_cases(c, checks, progs, ours)
        with slurm_cluster.Cluster(libdir=libdir, slurmd_env={"PMIX_MCA_ptl": "tcp"},
                                   keep_logs=keep_logs and keep_logs + "/tcp") as c:
            checks.cluster = c
            run_tcp_case(c, checks, progs, ours)
        with slurm_cluster.Cluster(libdir=libdir, nodes=2,
                                   keep_logs=keep_logs and keep_logs + "/two_nodes") as c:
            checks.cluster = c
            run_two_node_cases(c, checks, progs, ours)
    finally:
        subprocess.run(["rm", "-rf", build])
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


HUNG = []  # the first step that had to be killed: later steps are not started


def srun(c, job, n, cmd, env=None, timeout=90):
    """One job step, bounded. Once a step hung the others are reported as not
    run, so a hang costs one timeout, not one per check."""
    argv = ["srun", f"--jobid={job}", "--mpi=pmix", "-O", "-n", str(n)] + cmd
    if HUNG:
        return subprocess.CompletedProcess(argv, None, "", f"not run: {HUNG[0]} hung")
    r = c.run(argv, env=env, timeout=timeout)
    if r.returncode is None:
        HUNG.append(" ".join(argv))
    return r


def run_cases(c, checks, progs, ours):
    job = c.allocate(16)
    for n in (1, 2, 4, 16):
        r = srun(c, job, n, [progs["mpi_exchange"], "hello"])
        checks.report(f"mpi_hello_n{n}", check_ranks(r, n, ours, "usock")[0], r)
    for n in (2, 4):
        r = srun(c, job, n, [progs["mpi_exchange"]])
        checks.report(f"mpi_exchange_n{n}", check_ranks(r, n, ours, "usock")[0], r)
    for n in (1, 4):
        r = srun(c, job, n, [progs["hello"]])
        greetings = [l for l in r.stdout.splitlines()
                     if re.match(rf"^hello from rank \d+ of {n} .*: read {n} greetings$", l)]
        problems = [] if r.returncode == 0 else [f"srun exit status {r.returncode}, want 0"]
        if len(greetings) != n:
            problems.append(f"{len(greetings)} complete greetings, want {n}")
        checks.report(f"pmix_hello_n{n}", problems, r)

    r = srun(c, job, 4, [progs["abort_seven"]])
    problems = [] if r.returncode == 7 else [f"srun exit status {r.returncode}, want 7"]
    checks.report("abort_rc7", problems, r)
    r = srun(c, job, 4, [progs["abort_client"]])
    problems = [] if r.returncode == 7 else [f"srun exit status {r.returncode}, want 7"]
    checks.report("pmix_abort_rc7", problems, r)

    problems, seen = [], []
    for step in range(2):
        r = srun(c, job, 4, [progs["mpi_exchange"]])
        p, namespaces = check_ranks(r, 4, ours, "usock")
        problems += [f"step {step + 1}: {x}" for x in p]
        if len(namespaces) != 1:
            problems.append(f"step {step + 1}: namespaces {sorted(namespaces)}, want one")
        seen += sorted(namespaces)
    if len(seen) == 2:
        if seen[0] == seen[1] or not all(s.startswith(f"slurm.pmix.{job}.") for s in seen):
            problems.append(f"namespaces {seen}: want two of job {job}, one per step")
    checks.report("two_steps", problems, r if problems else None)
    c.release(job)


def run_tcp_case(c, checks, progs, ours):
    job = c.allocate(4)
    r = srun(c, job, 4, [progs["mpi_exchange"]], env={"PMIX_MCA_ptl": "tcp"})
    checks.report("tcp_forced", check_ranks(r, 4, ours, "tcp")[0], r)
    c.release(job)


def run_two_node_cases(c, checks, progs, ours):
    job = c.allocate(4, nodes=2)
    for name, mode in (("two_nodes_fence_data", "collect"), ("two_nodes_direct_modex", "nocollect")):
        # One key, PMIX_GLOBAL (modex_client's odd keys are PMIX_LOCAL: not
        # for the other node's ranks).
        r = srun(c, job, 4, ["-N", "2", progs["modex_client"], "1", "3000", mode])
        ok = [l for l in r.stdout.splitlines()
              if re.match(r"^modex ok: rank [0-3] checked 1 keys of 3000 bytes from 4 ", l)]
        problems = [] if r.returncode == 0 else [f"srun exit status {r.returncode}, want 0"]
        if len(ok) != 4:
            problems.append(f"{len(ok)} ranks checked every peer's data, want 4")
        checks.report(name, problems, r)
    # Open MPI over TCP on the loopback only: its shared-memory transport
    # cannot span two "nodes" of one host.
    mpi_env = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}
    r = srun(c, job, 4, ["-N", "2", progs["mpi_exchange"]], env=mpi_env)
    checks.report("two_nodes_mpi_exchange", check_ranks(r, 4, ours, "usock")[0], r)
    c.release(job)


def _terminated(signum, frame):
    raise SystemExit(f"slurm_pmix.py: signal {signum}: tearing the private Slurm down")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, _terminated)
    try:
        sys.exit(main())
    except slurm_cluster.ClusterError as e:
        print(f"slurm_pmix.py: the private Slurm did not work: {e}")
        sys.exit(1)
