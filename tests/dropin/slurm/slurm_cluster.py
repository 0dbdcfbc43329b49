"""A private one-node Slurm (munged, slurmctld, slurmd) on this machine, whose
slurmd runs in its own mount namespace where a chosen libpmix.so.2 and its
pmix/ component directory are bind-mounted over Debian's OpenPMIx files
(docs/dropin.md, "Slurm"). Used by slurm_pmix.py (dropin.slurm_srun_pmix) and
bench/slurm_srun.py.

Everything lives in a temporary directory: the munge key and socket, the
configuration, state, spool, logs and pid files; the daemons listen on free
loopback ports. Nothing is found or ended by name: the daemons are children of
this process (they get SIGTERM if it dies: PR_SET_PDEATHSIG), and at the end
every process in slurmd's private mount namespace (slurmd, each slurmstepd,
the tasks) is ended by pid.

    with Cluster(libdir="/path/to/build/lib") as c:   # libdir None: Debian's
        job = c.allocate(16)
        c.run(["srun", f"--jobid={job}", "--mpi=pmix", "-n", "4", "./a.out"])
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DEBIAN_PMIX_LIB = "/usr/lib/x86_64-linux-gnu/pmix2/lib"
DEBIAN_PMIX_FILE = DEBIAN_PMIX_LIB + "/libpmix.so.2.6.2"  # what libpmix.so and .so.2 name
SLURM_PMIX_PLUGIN = "/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v4.so"
COMMANDS = ["munged", "slurmctld", "slurmd", "srun", "salloc", "sinfo", "scancel", "unshare"]

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # Runs in the child before exec: SIGTERM when this process ends, however it ends.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def cannot_run():
    """Why a private Slurm cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: slurmd, the bind mounts and the mount namespace need root"
    missing = [c for c in COMMANDS if shutil.which(c) is None]
    if missing:
        return ("Slurm is not installed (missing " + ", ".join(missing) +
                "; scripts/install-deps.sh installs slurmd slurmctld slurm-client munge "
                "slurm-wlm-basic-plugins)")
    for path in (SLURM_PMIX_PLUGIN, DEBIAN_PMIX_FILE, DEBIAN_PMIX_LIB + "/pmix"):
        if not os.path.exists(path):
            return f"{path} is missing (slurm-wlm-basic-plugins and libpmix2 provide it)"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return "no private mount namespace here (unshare -m: " + probe.stderr.strip() + ")"
    return None


def _free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _mount_ns(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


class ClusterError(Exception):
    pass


class Cluster:
    def __init__(self, libdir=None, slurmd_env=None, debug="info", keep_logs=None, nodes=1):
        """libdir: directory holding our libpmix.so.2 and pmix/ (None: Debian's
        OpenPMIx stays); slurmd_env: extra environment of slurmd, so of each
        slurmstepd and the PMIx server in it; keep_logs: a directory the logs
        are copied to at the end; nodes: 1, or 2 for two slurmds on this host
        (two Slurm nodes, each with its own port, spool and TmpFS, both in the
        one mount namespace), so that a step spans nodes."""
        self.libdir = os.path.abspath(libdir) if libdir else None
        self.slurmd_env = dict(slurmd_env or {})
        self.debug = debug
        self.keep_logs = keep_logs
        self.work = None
        self.node = socket.gethostname().split(".")[0]
        self.nodes = [self.node] + [f"{self.node}n{i}" for i in range(2, nodes + 1)]
        self.procs = {}  # name -> Popen of the daemons we started
        self.env = None  # environment for the Slurm commands (SLURM_CONF)

    # --- life cycle -------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.work = tempfile.mkdtemp(prefix="pmixpp_slurm.")
        os.chmod(self.work, 0o755)  # munged wants a socket directory others can traverse
        for d in ("state", "spool", "tmp", "log"):
            os.mkdir(os.path.join(self.work, d))
            if d in ("spool", "tmp"):
                for n in self.nodes:
                    os.mkdir(os.path.join(self.work, d, n))
        self.env = dict(os.environ, SLURM_CONF=self.path("slurm.conf"))
        for name in [n for n in self.env if n.startswith("SLURM_") and n != "SLURM_CONF"]:
            del self.env[name]  # nothing of an outer Slurm job leaks in
        self._start_munged()
        ctld_port, *slurmd_ports = _free_ports(1 + len(self.nodes))
        self._write_conf(ctld_port, slurmd_ports)
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.path("slurm.conf")],
                    self.env)
        self._spawn("slurmd", ["unshare", "-m", "--propagation", "private", "sh", "-c",
                               self._slurmd_script()], dict(self.env, **self.slurmd_env))
        self._wait_idle(60)

    def stop(self):
        """Ends every process this cluster started, by pid, and removes its
        directory. Safe to call more than once and after a failed start."""
        slurmd = self.procs.get("slurmd")
        if slurmd is not None:
            self._end_namespace(slurmd)
        for name in ("slurmctld", "munged"):
            p = self.procs.get(name)
            if p is not None:
                self._end(p)
        self.procs = {}
        if self.work:
            if self.keep_logs:
                shutil.copytree(self.path("log"), self.keep_logs, dirs_exist_ok=True)
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None

    # --- using it ---------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def run(self, cmd, timeout=120, env=None):
        """Runs a Slurm command (srun, salloc...) as our child, bounded: at the
        limit it is killed and the result says so (returncode None)."""
        full_env = dict(self.env, **(env or {}))
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=full_env, preexec_fn=_die_with_parent)
        try:
            out, err = p.communicate(timeout=timeout)
            return subprocess.CompletedProcess(cmd, p.returncode, out, err)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err += f"\n[killed after {timeout} s]"
            return subprocess.CompletedProcess(cmd, None, out, err)

    def allocate(self, ntasks, nodes=1, timeout=60):
        """An allocation of ntasks tasks (oversubscribed) on `nodes` nodes,
        without a shell: its job id."""
        r = self.run(["salloc", "--no-shell", "-O", "-N", str(nodes), "-n", str(ntasks),
                      "-J", "pmixpp"], timeout=timeout)
        for line in (r.stderr + r.stdout).splitlines():
            if "Granted job allocation" in line:
                return int(line.split()[-1])
        raise ClusterError(f"salloc failed (status {r.returncode}): {r.stderr.strip()}")

    def release(self, job, timeout=60):
        self.run(["scancel", str(job)], timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.run(["squeue", "-h", "-j", str(job), "-o", "%T"], timeout=timeout)
            if r.returncode != 0 or not r.stdout.strip():
                return
            time.sleep(0.05)
        raise ClusterError(f"job {job} still listed {timeout} s after scancel")

    def log_tail(self, name, lines=40):
        """The end of a log file (slurmd's: slurmd.<node>.log)."""
        try:
            with open(self.path("log", name), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError as e:
            return f"({e})"

    # --- inside -------------------------------------------------------------
    def _spawn(self, name, cmd, env):
        out = open(self.path("log", name + ".out"), "w")
        try:
            self.procs[name] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, env=env,
                                                preexec_fn=_die_with_parent)
        finally:
            out.close()

    def _start_munged(self):
        with open(self.path("munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge.key"), 0o600)
        self._spawn("munged", ["munged", "-F", "-f", "--socket=" + self.path("munge.sock"),
                               "--key-file=" + self.path("munge.key"),
                               "--pid-file=" + self.path("munged.pid"),
                               "--seed-file=" + self.path("munged.seed"),
                               "--log-file=" + self.path("log", "munged.log")], self.env)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.path("munge.sock")):
            if self.procs["munged"].poll() is not None or time.monotonic() > deadline:
                raise ClusterError("munged did not start: " + self.log_tail("munged.out"))
            time.sleep(0.02)

    def _write_conf(self, ctld_port, slurmd_ports):
        cpus = os.cpu_count() or 1
        nodes = "".join(f"NodeName={n} NodeHostname={self.node} NodeAddr=127.0.0.1 Port={p} "
                        f"CPUs={cpus} State=UNKNOWN\n" for n, p in zip(self.nodes, slurmd_ports))
        conf = f"""# written by tests/dropin/slurm/slurm_cluster.py
ClusterName=pmixpp
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
AuthType=auth/munge
AuthInfo=socket={self.path("munge.sock")}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={self.path("state")}
SlurmdSpoolDir={self.path("spool")}/%n
SlurmctldPidFile={self.path("slurmctld.pid")}
SlurmdPidFile={self.path("slurmd.%n.pid")}
SlurmctldLogFile={self.path("log", "slurmctld.log")}
SlurmdLogFile={self.path("log", "slurmd.%n.log")}
SlurmctldDebug=info
SlurmdDebug={self.debug}
PlugStackConfig={self.path("plugstack.conf")}
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
TmpFS={self.path("tmp")}/%n
ReturnToService=2
{nodes}PartitionName=pmixpp Nodes={",".join(self.nodes)} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16
"""
        with open(self.path("slurm.conf"), "w") as f:
            f.write(conf)
        open(self.path("plugstack.conf"), "w").close()

    def _slurmd_script(self):
        mounts = ""
        if self.libdir:
            lib, comps = os.path.join(self.libdir, "libpmix.so.2"), os.path.join(self.libdir, "pmix")
            mounts = (f"mount --bind '{lib}' '{DEBIAN_PMIX_FILE}' && "
                      f"mount --bind '{comps}' '{DEBIAN_PMIX_LIB}/pmix' && ")
        conf = self.path("slurm.conf")
        # Further nodes' slurmds start in the background of this shell, so in
        # the same namespace; the first replaces the shell (its pid is ours).
        others = "".join(f"slurmd -D -N '{n}' -f '{conf}' > '{self.path('log', n + '.out')}' 2>&1 & "
                         for n in self.nodes[1:])
        return mounts + others + f"exec slurmd -D -N '{self.node}' -f '{conf}'"

    def _wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise ClusterError(f"{name} exited with status {p.returncode}: " +
                                       self.log_tail(name + ".out"))
            r = self.run(["sinfo", "-h", "-N", "-o", "%T"], timeout=30)
            state = r.stdout.split()
            if r.returncode == 0 and state == ["idle"] * len(self.nodes):
                return
            time.sleep(0.05)
        raise ClusterError(f"nodes {self.nodes} not idle after {timeout} s (states {state})")

    @staticmethod
    def _end(p, grace=10):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def _end_namespace(self, slurmd):
        """slurmd and everything in its mount namespace (slurmstepds, tasks)."""
        ns = _mount_ns(slurmd.pid)
        ours = _mount_ns(os.getpid())
        self._end(slurmd)
        if ns is None or ns == ours:
            return
        # slurmstepds outlive slurmd; they and their tasks are the namespace's
        # other members. SIGKILL is final; a few rounds catch late forks.
        for _ in range(50):
            members = []
            for entry in os.listdir("/proc"):
                if entry.isdigit() and _mount_ns(entry) == ns:
                    members.append(int(entry))
            if not members:
                return
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
