"""dropin.python_server_client: one client of the job server.py hosts.

The client side. It shows that Debian's python3-pmix PMIxClient works on our
libpmix.so.2 against a host that is python3-pmix on our library too:
PMIx_Init; Get of job info; Put, Commit, Fence with PMIX_COLLECT_DATA and Get
of the peer's keys; Publish (rank 0), Lookup with PMIX_WAIT (rank 1),
Unpublish and a Lookup that no longer finds the key; event handlers, and
PMIx_Notify_event from rank 0 to rank 1 and from the host to both;
PMIx_Finalize. Any mismatch exits non-zero.

Usage (server.py starts it): client.py OUR_LIB_DIR, in the environment
PMIx_server_setup_fork gave. The libpmix.so.2 mapped into this process must
be the one in OUR_LIB_DIR. SIGUSR1 dumps the Python stacks.

Deadlocks the order of the steps avoids. Our library (like OpenPMIx) calls
event handlers on its progress thread; the binding runs the Python handler
there with the GIL, while its blocking calls (fence, get, lookup, ...) keep
the GIL while they wait for that thread. So:
- an event must reach this process only while it waits for it in Python,
  not inside a blocking call whose answer comes after the event. Rank 0
  raises its event after a fence that rank 1 leaves only to wait for it;
  the host raises its event after the answer to rank 1's publish of
  READY_KEY, its last call before it waits, and rank 0 waits by then;
- handlers are registered before any event for them is raised: an event
  delivered before the binding has recorded the new handler's id sends it
  down a retry path that starts a thread from the progress thread, and
  that can deadlock with the next blocking call;
- after our handler returns, the binding still runs Python code on the
  progress thread (it queues the results). If the main thread took the GIL
  back in the middle of that, on Python's periodic forced switch, and
  entered a blocking call, both would wait forever (seen under load). A
  switch interval far longer than that tail lets the progress thread finish
  it first: the other threads here give the GIL up by themselves (waiting,
  sleeping, blocking calls).
"""
import faulthandler
import os
import signal
import sys
import threading

from dropin_common import (HOST_EVENT, HOST_EVENT_PAYLOAD, NPROCS, PUBLISHED_KEY, READY_KEY,
                           SWITCH_INTERVAL, info, mapped_libpmix)

PEER_EVENT = -3100  # rank 0 -> rank 1
PEER_EVENT_PAYLOAD = "rank0-says-hello"
HOST_SOURCE = ("pypmix.host", 0)
PUBLISHED_VALUE = "published-by-rank-0"
EVENT_TIMEOUT = 20.0  # seconds
PMIX_TIMEOUT = 30  # seconds, given to fence and lookup


class TestFailure(Exception):
    pass


def put_value(rank):
    return "value-of-rank-%d" % rank


class Client:
    def __init__(self, pmix, ours):
        self.pmix = pmix
        self.ours = ours
        self.client = pmix.PMIxClient()
        self.rank = None
        self.nspace = None
        self.received = {}  # event status -> (source, {key: value})
        self.arrived = {PEER_EVENT: threading.Event(), HOST_EVENT: threading.Event()}

    def log(self, msg):
        # One write per line, so that lines of several processes do not mix.
        sys.stdout.write("[rank %s] %s\n" % (self.rank, msg))
        sys.stdout.flush()

    def expect(self, what, rc, want=0):
        if rc != want:
            raise TestFailure("%s returned %d (%s), expected %d (%s)" % (
                what, rc, self.client.error_string(rc), want, self.client.error_string(want)))

    def check_our_library(self):
        loaded = mapped_libpmix()
        if not loaded:
            raise TestFailure("PMIx_Init succeeded but no libpmix.so is mapped")
        foreign = sorted(p for p in loaded if os.path.dirname(p) != self.ours)
        if foreign:
            raise TestFailure("a libpmix that is not ours is mapped: %s (ours: %s)"
                              % (", ".join(foreign), self.ours))
        return ", ".join(sorted(loaded))

    # The binding calls this on our library's progress thread: it records
    # the event, wakes the main thread last, and ends the handler chain.
    def handler(self, unused_id, status, source, event_info, unused_results):
        values = {i["key"]: i["value"] for i in event_info}
        self.log("event %d from %s:%s, %s" % (status, source["nspace"], source["rank"], values))
        self.received[status] = (source, values)
        if status in self.arrived:
            self.arrived[status].set()
        return self.pmix.PMIX_EVENT_ACTION_COMPLETE, []

    def register(self, status, name):
        directives = [info(self.pmix.PMIX_EVENT_HDLR_NAME, name, self.pmix.PMIX_STRING)]
        rc, ref = self.client.register_event_handler([status], directives, self.handler)
        self.expect("register_event_handler(%d)" % status, rc)
        if ref < 0:
            raise TestFailure("register_event_handler(%d) gave the handler id %d" % (status, ref))

    def wait_event(self, status, source, key, value):
        if not self.arrived[status].wait(timeout=EVENT_TIMEOUT):
            raise TestFailure("event %d did not arrive within %.0f s" % (status, EVENT_TIMEOUT))
        got_source, values = self.received[status]
        if (got_source["nspace"], got_source["rank"]) != source:
            raise TestFailure("event %d came from %s, expected %s:%d"
                              % (status, got_source, *source))
        if values.get(key) != value:
            raise TestFailure("event %d carried %s=%r, expected %r"
                              % (status, key, values.get(key), value))

    # Data calls, each checked.
    def fence(self, what, collect=False):
        directives = [info(self.pmix.PMIX_TIMEOUT, PMIX_TIMEOUT, self.pmix.PMIX_INT)]
        if collect:
            directives.append(info(self.pmix.PMIX_COLLECT_DATA, True, self.pmix.PMIX_BOOL))
        self.expect("fence (%s)" % what, self.client.fence([], directives))

    def get(self, rank, key, want_value, want_type):
        rc, val = self.client.get({"nspace": self.nspace, "rank": rank}, key, [])
        self.expect("get(rank %d, %s)" % (rank, key), rc)
        if val is None or val.get("value") != want_value or val.get("val_type") != want_type:
            raise TestFailure("get(rank %d, %s) = %r, expected %r of type %d"
                              % (rank, key, val, want_value, want_type))

    def put(self, key, value, val_type):
        rc = self.client.put(self.pmix.PMIX_GLOBAL, key, {"value": value, "val_type": val_type})
        self.expect("put(%s)" % key, rc)

    def lookup(self, wait):
        directives = [info(self.pmix.PMIX_TIMEOUT, PMIX_TIMEOUT, self.pmix.PMIX_INT)]
        if wait:
            # PMIX_WAIT (int): wait until that many of the keys are found;
            # 0, all of them.
            directives.append(info(self.pmix.PMIX_WAIT, 0, self.pmix.PMIX_INT))
        return self.client.lookup([{"key": PUBLISHED_KEY}], directives)

    def run(self):
        pmix = self.pmix
        rc, me = self.client.init([])
        self.expect("init", rc)
        self.rank, self.nspace = me["rank"], me["nspace"]
        mapped = self.check_our_library()
        self.log("PMIx_Init as %s:%d; libpmix mapped from %s" % (self.nspace, self.rank, mapped))
        forked = (os.environ.get("PMIX_NAMESPACE"), os.environ.get("PMIX_RANK"))
        if (self.nspace, str(self.rank)) != forked:
            raise TestFailure("PMIx_Init named us %s, setup_fork %s:%s" % (me, *forked))
        peer = 1 - self.rank

        # Before any of these events is raised.
        if self.rank == 1:
            self.register(PEER_EVENT, "pypmix.peer")
        self.register(HOST_EVENT, "pypmix.host")

        self.get(pmix.PMIX_RANK_WILDCARD, pmix.PMIX_JOB_SIZE, NPROCS, pmix.PMIX_UINT32)
        self.put("pypmix.string", put_value(self.rank), pmix.PMIX_STRING)
        self.put("pypmix.number", 1000 + self.rank, pmix.PMIX_UINT32)
        self.expect("commit", self.client.commit())
        self.fence("collect data", collect=True)
        self.get(peer, "pypmix.string", put_value(peer), pmix.PMIX_STRING)
        self.get(peer, "pypmix.number", 1000 + peer, pmix.PMIX_UINT32)
        self.get(self.rank, "pypmix.string", put_value(self.rank), pmix.PMIX_STRING)
        self.log("put/commit/fence/get OK")

        # Published before the fence; rank 1 looks it up after it.
        if self.rank == 0:
            rc = self.client.publish([info(PUBLISHED_KEY, PUBLISHED_VALUE, pmix.PMIX_STRING)])
            self.expect("publish", rc)
        self.fence("after publish")

        # Rank 0 -> rank 1, which does nothing but wait for it.
        if self.rank == 0:
            payload = [info("pypmix.peer.payload", PEER_EVENT_PAYLOAD, pmix.PMIX_STRING)]
            rc = self.client.notify_event(PEER_EVENT, {"nspace": self.nspace, "rank": 0},
                                          pmix.PMIX_RANGE_NAMESPACE, payload)
            self.expect("notify_event", rc)
        else:
            self.wait_event(PEER_EVENT, (self.nspace, 0), "pypmix.peer.payload", PEER_EVENT_PAYLOAD)
            self.log("event from rank 0 received")
        self.fence("after the peer event")

        if self.rank == 1:
            rc, pdata = self.lookup(wait=True)
            self.expect("lookup(%s, PMIX_WAIT)" % PUBLISHED_KEY, rc)
            # Not the publisher's name: the binding's lookup upcall names the
            # requester in every pdata it hands back (with a C host, rank 0).
            if [(d.get("key"), d.get("value"), d.get("val_type")) for d in pdata] \
                    != [(PUBLISHED_KEY, PUBLISHED_VALUE, pmix.PMIX_STRING)]:
                raise TestFailure("lookup(%s) = %r, expected %r"
                                  % (PUBLISHED_KEY, pdata, PUBLISHED_VALUE))
            self.log("lookup with PMIX_WAIT found %r" % PUBLISHED_VALUE)
            # The last call before waiting: the host raises its event when
            # this publish has reached it.
            rc = self.client.publish([info(READY_KEY, "yes", pmix.PMIX_STRING)])
            self.expect("publish(%s)" % READY_KEY, rc)
        self.wait_event(HOST_EVENT, HOST_SOURCE, "pypmix.host.payload", HOST_EVENT_PAYLOAD)
        self.log("event from the host received")
        self.fence("after the host event")

        # Each unpublishes what it published, then the key is gone.
        mine = [PUBLISHED_KEY] if self.rank == 0 else [READY_KEY]
        self.expect("unpublish(%s)" % mine, self.client.unpublish(mine, []))
        self.fence("after unpublish")
        if self.rank == 1:
            rc, unused = self.lookup(wait=False)
            self.expect("lookup(%s) after unpublish" % PUBLISHED_KEY, rc, pmix.PMIX_ERR_NOT_FOUND)
            self.log("unpublished key gone")

        self.fence("before finalize")
        self.expect("finalize", self.client.finalize([]))
        self.log("PASS")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: client.py OUR_LIB_DIR")
    # Last resort against a hang inside a PMIx call: dump the stacks, exit.
    faulthandler.dump_traceback_later(80, exit=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.setswitchinterval(SWITCH_INTERVAL)
    import pmix

    client = Client(pmix, os.path.realpath(sys.argv[1]))
    try:
        client.run()
    except TestFailure as e:
        client.log("FAIL: %s" % e)
        # At once: PMIx_Finalize could wait for a peer that is gone.
        sys.stdout.flush()
        os._exit(1)
    faulthandler.cancel_dump_traceback_later()


if __name__ == "__main__":
    main()
