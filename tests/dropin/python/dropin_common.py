"""What server.py and client.py of dropin.python_server_client share: the
job's shape, the keys and the host event they agree on, and two helpers."""
import os

NPROCS = 2
PUBLISHED_KEY = "pypmix.published"  # rank 0 publishes it, rank 1 looks it up
READY_KEY = "pypmix.waiting"  # rank 1: "waiting for the host event now"
HOST_EVENT = -3101  # server.py -> both clients
HOST_EVENT_PAYLOAD = "host-says-hello"
# Seconds; see client.py's module comment (the binding's GIL hand-offs).
SWITCH_INTERVAL = 5.0


def info(key, value, val_type):
    # The binding leaves pmix_info_t.flags uninitialised unless given.
    return {"key": key, "flags": 0, "value": value, "val_type": val_type}


def mapped_libpmix():
    """The real paths of every libpmix.so* mapped into this process."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.basename(fields[5]).startswith("libpmix.so"):
                paths.add(os.path.realpath(fields[5]))
    return paths
