"""dropin.python_server_client: Debian's python3-pmix hosts a job on our library.

The host side. It shows that a PMIx server written in Python with Debian's
python3-pmix (the second real consumer of libpmix.so.2 besides Open MPI,
OPENMPI-CONTRACT.md section 5) runs on our library: PMIxServer.init with the
server module implemented here in Python (publish/lookup/unpublish keep the
data in a dict; client connected/finalized are recorded; fence and direct
modex answered), generate_regex/generate_ppn, register_nspace of a job of
NPROCS clients, register_client and setup_fork for each, client.py started
NPROCS times with that environment, and an event of the host's own
(PMIx_Notify_event in the server process) that both clients must receive.
The test passes when every client exits 0 and the upcalls the host saw are
the expected ones.

Usage: server.py OUR_LIB_DIR, with LD_LIBRARY_PATH=OUR_LIB_DIR and Debian's
/usr/bin/python3 (python3-pmix lives in its dist-packages). This process and
every client check /proc/self/maps: the libpmix.so.2 mapped must be the one
in OUR_LIB_DIR. Every wait is bounded; a client still running at the end is
made to dump its Python stacks (SIGUSR1), then killed.

When the host event is raised: the binding calls handlers on the library's
progress thread with the GIL, and its blocking calls keep the GIL while they
wait for that thread, so an event must reach each client only while it
waits for it in Python (client.py explains). Rank 1 says it is waiting by
publishing READY_KEY, its last call before waiting; rank 0 is waiting by
then (a fence orders it). The host raises the event once that publish
upcall has returned, so the event follows the publish's answer. (Raising it
before the clients start, for the server library to cache, is what the
standard allows, but a cached event is delivered the moment the handler is
registered, before the binding has recorded the handler's id; the binding
then retries from a thread it starts on the progress thread, which can
deadlock with the client's next blocking call. Seen under load.)

The same GIL rule holds here: the host's upcalls run on the progress thread
with the GIL while the main thread's PMIx calls keep it. The main thread
makes such a call while clients run only to raise the event, when no upcall
can be in progress but the tail of that publish: a long switch interval
keeps Python from handing the GIL to the main thread in the middle of it.
"""
import faulthandler
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from dropin_common import (HOST_EVENT, HOST_EVENT_PAYLOAD, NPROCS, PUBLISHED_KEY, READY_KEY,
                           SWITCH_INTERVAL, info, mapped_libpmix)

NSPACE = "pypmix.job"
HOST_SOURCE = {"nspace": "pypmix.host", "rank": 0}
JOB_TIMEOUT = 60.0  # seconds for the clients to finish


def log(msg):
    # One write per line, so that lines of several processes do not mix.
    sys.stdout.write("[server] %s\n" % msg)
    sys.stdout.flush()


def check_our_library(ours):
    loaded = mapped_libpmix()
    if not loaded:
        sys.exit("server: import pmix succeeded but no libpmix.so is mapped")
    foreign = sorted(p for p in loaded if os.path.dirname(p) != ours)
    if foreign:
        sys.exit("server: a libpmix that is not ours is mapped: %s (ours: %s)"
                 % (", ".join(foreign), ours))
    log("libpmix mapped from %s" % ", ".join(sorted(loaded)))


def as_str(key):
    # The binding hands strings over as bytes in some upcalls.
    return key.decode("ascii") if isinstance(key, (bytes, bytearray)) else str(key)


class Host:
    """The server module: what a resource manager would do, in memory.

    The binding calls these on our library's progress thread, with the GIL.
    They return at once: the binding turns PMIX_SUCCESS into
    PMIX_OPERATION_SUCCEEDED, or queues the completion callback with the
    returned data for its own thread to call. It gives Python no callback to
    keep, so no request can be left pending.
    """

    def __init__(self, pmix):
        self.pmix = pmix
        self.lock = threading.Lock()
        self.connected = []
        self.finalized = []
        self.published = {}  # key -> (publisher rank, value, val_type)
        self.publish_calls = []  # (rank, data keys)
        self.lookup_calls = []  # (rank, keys, directives)
        self.unpublish_calls = []  # (rank, keys or None)
        self.errors = []
        self.clients_waiting = threading.Event()

    def upcall_map(self):
        upcalls = {
            "clientconnected": (self.client_connected, False),
            "clientfinalized": (self.client_finalized, False),
            "abort": (self.abort, False),
            "fencenb": (self.fence, True),
            "directmodex": (self.direct_modex, True),
            "publish": (self.publish, False),
            "lookup": (self.lookup, True),
            "unpublish": (self.unpublish, False),
            "registerevents": (self.succeed, False),
            "deregisterevents": (self.succeed, False),
            # No notify_event: python3-pmix 4.2.2 never calls a Python one
            # (tried with a client's PMIX_RANGE_GLOBAL event, which our
            # library hands to the host's notify_event, server/events.cpp;
            # on Debian's OpenPMIx it is not called either).
        }
        return {name: self._guard(name, fn, with_data) for name, (fn, with_data) in upcalls.items()}

    def _guard(self, name, fn, with_data):
        # An exception must not escape into the binding's C callback.
        def upcall(*args):
            try:
                return fn(*args)
            except Exception as e:  # reported, and the test fails
                self.fail("upcall %s raised %r" % (name, e))
                return (self.pmix.PMIX_ERROR, []) if with_data else self.pmix.PMIX_ERROR

        return upcall

    def fail(self, msg):
        log("ERROR: " + msg)
        with self.lock:
            self.errors.append(msg)

    def client_connected(self, proc, *unused):
        log("client connected: %s" % (proc,))
        with self.lock:
            self.connected.append(proc["rank"])
        return self.pmix.PMIX_SUCCESS

    def client_finalized(self, proc, *unused):
        log("client finalized: %s" % (proc,))
        with self.lock:
            self.finalized.append(proc["rank"])
        return self.pmix.PMIX_SUCCESS

    def abort(self, args, *unused):
        self.fail("a client called PMIx_Abort: %s" % (args,))
        return self.pmix.PMIX_SUCCESS

    def fence(self, args, *unused):
        # One node: everyone's data is what we were given. (Our library
        # completes a fence of local clients itself; this runs only for a
        # library that wants the host to take part.)
        data = bytes(args.get("data") or b"")
        log("fence_nb upcall: %d bytes" % len(data))
        return self.pmix.PMIX_SUCCESS, data

    def direct_modex(self, args, *unused):
        # Every process is local: the library must not ask the host.
        self.fail("unexpected direct_modex upcall: %s" % (args,))
        return self.pmix.PMIX_ERR_NOT_FOUND, b""

    def publish(self, args, *unused):
        rank = args["proc"]["rank"]
        stored = []
        with self.lock:
            for d in args.get("directives", []):
                key = as_str(d["key"])
                # "pmix.*" are directives (range, persistence, the uid our
                # library adds); everything else is data.
                if key.startswith("pmix."):
                    continue
                if key in self.published:
                    return self.pmix.PMIX_ERR_DUPLICATE_KEY
                self.published[key] = (rank, d["value"], d["val_type"])
                stored.append(key)
            self.publish_calls.append((rank, stored))
        log("publish from rank %d: %s" % (rank, stored))
        if READY_KEY in stored:
            self.clients_waiting.set()  # last: main() raises the host event
        return self.pmix.PMIX_SUCCESS

    def lookup(self, args, *unused):
        rank = args["proc"]["rank"]
        keys = [as_str(k) for k in args.get("keys", [])]
        directives = {as_str(d["key"]): d.get("value") for d in args.get("directives", [])}
        found = []
        with self.lock:
            self.lookup_calls.append((rank, keys, directives))
            for key in keys:
                if key in self.published:
                    _, value, val_type = self.published[key]
                    found.append(info(key, value, val_type))
        log("lookup from rank %d: %s, directives %s: %d found"
            % (rank, keys, sorted(directives), len(found)))
        # With PMIX_WAIT a host would keep the request until the data is
        # published; the binding does not let us (see the class comment),
        # so client.py publishes before it looks up.
        if len(found) < len(keys):
            return self.pmix.PMIX_ERR_NOT_FOUND, []
        return self.pmix.PMIX_SUCCESS, found

    def unpublish(self, args, *unused):
        rank = args["proc"]["rank"]
        # Workaround: Debian's python3-pmix 4.2.2 does not hand the keys to
        # this upcall (args has only "proc" and "directives"; the same with
        # Debian's OpenPMIx, and a C host gets them), so they look like
        # NULL keys, which the standard reads as "all this process
        # published". Each client's unpublish names exactly that.
        keys = [as_str(k) for k in args["keys"]] if "keys" in args else None
        with self.lock:
            self.unpublish_calls.append((rank, keys))
            for key in list(self.published):
                if self.published[key][0] == rank and (keys is None or key in keys):
                    del self.published[key]
        log("unpublish from rank %d: %s" % (rank, "all its data" if keys is None else keys))
        return self.pmix.PMIX_SUCCESS

    def succeed(self, *unused):
        return self.pmix.PMIX_SUCCESS

    def problems(self):
        ranks = list(range(NPROCS))
        found = list(self.errors)
        if sorted(self.connected) != ranks:
            found.append("client_connected upcalls for ranks %s, expected %s"
                         % (self.connected, ranks))
        if sorted(self.finalized) != ranks:
            found.append("client_finalized upcalls for ranks %s, expected %s"
                         % (self.finalized, ranks))
        if sorted(self.publish_calls) != [(0, [PUBLISHED_KEY]), (1, [READY_KEY])]:
            found.append("publish upcalls %s, expected rank 0 publishing %s and rank 1 %s"
                         % (self.publish_calls, PUBLISHED_KEY, READY_KEY))
        waited = [c for c in self.lookup_calls
                  if c[0] == 1 and c[1] == [PUBLISHED_KEY] and "pmix.wait" in c[2]]
        if not waited:
            found.append("no lookup of %s with PMIX_WAIT from rank 1: %s"
                         % (PUBLISHED_KEY, self.lookup_calls))
        if sorted(c[0] for c in self.unpublish_calls) != ranks:
            found.append("unpublish upcalls %s, expected one from each rank" % self.unpublish_calls)
        if self.published:
            found.append("data still published at the end: %s" % self.published)
        return found


def job_info(pmix, server):
    """Job-level info of NPROCS ranks on this node, maps made by the library."""
    rc, regex = server.generate_regex([socket.gethostname()])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("server: generate_regex = %d" % rc)
    rc, ppn = server.generate_ppn([",".join(str(r) for r in range(NPROCS))])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("server: generate_ppn = %d" % rc)
    # The binding returns bytearrays; both maps are printable strings.
    node_map = bytes(regex).rstrip(b"\0").decode("ascii")
    proc_map = bytes(ppn).rstrip(b"\0").decode("ascii")
    return [info(pmix.PMIX_NODE_MAP, node_map, pmix.PMIX_STRING),
            info(pmix.PMIX_PROC_MAP, proc_map, pmix.PMIX_STRING),
            info(pmix.PMIX_JOBID, NSPACE, pmix.PMIX_STRING),
            info(pmix.PMIX_JOB_SIZE, NPROCS, pmix.PMIX_UINT32),
            info(pmix.PMIX_UNIV_SIZE, NPROCS, pmix.PMIX_UINT32),
            info(pmix.PMIX_MAX_PROCS, NPROCS, pmix.PMIX_UINT32),
            info(pmix.PMIX_LOCAL_SIZE, NPROCS, pmix.PMIX_UINT32),
            info(pmix.PMIX_LOCAL_PEERS, ",".join(str(r) for r in range(NPROCS)), pmix.PMIX_STRING)]


def start_clients(pmix, server, ours):
    procs = []
    try:
        for rank in range(NPROCS):
            procs.append(start_client(pmix, server, ours, rank))
    except SystemExit:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
        raise
    return procs


def start_client(pmix, server, ours, rank):
    proc = {"nspace": NSPACE, "rank": rank}
    rc = server.register_client(proc, os.getuid(), os.getgid())
    if rc not in (pmix.PMIX_SUCCESS, pmix.PMIX_OPERATION_SUCCEEDED):
        sys.exit("server: register_client(rank %d) = %d" % (rank, rc))
    fork_env = {}
    rc = server.setup_fork(proc, fork_env)
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("server: setup_fork(rank %d) = %d" % (rank, rc))
    if fork_env.get("PMIX_NAMESPACE") != NSPACE or fork_env.get("PMIX_RANK") != str(rank):
        sys.exit("server: setup_fork(rank %d) named another process: %s" % (rank, fork_env))
    env = os.environ.copy()
    env.update(fork_env)
    client_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py")
    return subprocess.Popen(["/usr/bin/python3", "-W", "ignore", client_py, ours], env=env)


def raise_host_event(pmix, server, host, procs, deadline):
    """Raises the host event once rank 1 said it waits for it (see above)."""
    while time.monotonic() < deadline and all(p.poll() is None for p in procs):
        if host.clients_waiting.wait(timeout=0.05):
            # Range LOCAL: every client on this node; the source is the host.
            payload = [info("pypmix.host.payload", HOST_EVENT_PAYLOAD, pmix.PMIX_STRING)]
            rc = server.notify_event(HOST_EVENT, HOST_SOURCE, pmix.PMIX_RANGE_LOCAL, payload)
            log("notify_event(%d) from the host = %d" % (HOST_EVENT, rc))
            if rc not in (pmix.PMIX_SUCCESS, pmix.PMIX_OPERATION_SUCCEEDED):
                host.fail("the host's notify_event returned %d" % rc)
            return


def wait_clients(procs, deadline):
    failed = []
    for rank, p in enumerate(procs):
        try:
            rc = p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGUSR1)  # client.py: dump the stacks
            time.sleep(1)
            p.kill()
            p.wait(timeout=10)
            failed.append("rank %d did not finish within %.0f s (killed)" % (rank, JOB_TIMEOUT))
            continue
        if rc != 0:
            failed.append("rank %d exited with %d" % (rank, rc))
    return failed


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: server.py OUR_LIB_DIR")
    ours = os.path.realpath(sys.argv[1])
    # Last resort against a hang inside a PMIx call: dump the stacks, exit.
    faulthandler.dump_traceback_later(JOB_TIMEOUT + 30, exit=True)
    sys.setswitchinterval(SWITCH_INTERVAL)
    import pmix

    check_our_library(ours)
    host = Host(pmix)
    server = pmix.PMIxServer()
    log("PMIx_Get_version() = %s" % server.get_version())
    with tempfile.TemporaryDirectory(prefix="pypmix.") as tmpdir:
        rc = server.init([info(pmix.PMIX_SERVER_TMPDIR, tmpdir, pmix.PMIX_STRING),
                          info(pmix.PMIX_SYSTEM_TMPDIR, tmpdir, pmix.PMIX_STRING)],
                         host.upcall_map())
        if rc != pmix.PMIX_SUCCESS:
            sys.exit("server: PMIx_server_init = %d" % rc)
        # The binding passes no callback: the call returns when it is done.
        rc = server.register_nspace(NSPACE, NPROCS, job_info(pmix, server))
        if rc not in (pmix.PMIX_SUCCESS, pmix.PMIX_OPERATION_SUCCEEDED):
            sys.exit("server: register_nspace = %d" % rc)
        procs = start_clients(pmix, server, ours)
        deadline = time.monotonic() + JOB_TIMEOUT
        raise_host_event(pmix, server, host, procs, deadline)
        failed = wait_clients(procs, deadline)
        for rank in range(NPROCS):
            server.deregister_client({"nspace": NSPACE, "rank": rank})
        server.deregister_nspace(NSPACE)
        rc = server.finalize()
        if rc != pmix.PMIX_SUCCESS:
            failed.append("PMIx_server_finalize = %d" % rc)
    problems = failed + host.problems()
    faulthandler.cancel_dump_traceback_later()
    if problems:
        for p in problems:
            log("FAIL: " + p)
        sys.exit(1)
    log("PASS: %d Python clients and a Python host ran on %s" % (NPROCS, ours))


if __name__ == "__main__":
    main()
