"""dropin.python_group_on_pmixrun: Debian's python3-pmix forms a process group on our library.

A second real client of the groups API (docs/groups.md): every rank of a
pmixrun job, a Python program using python3-pmix's PMIxClient on our
libpmix.so.2, puts and commits a key, constructs one group of all ranks
with PMIX_GROUP_ASSIGN_CONTEXT_ID, checks the results (group id and a
context id), reads every member's key from its own store only
(PMIX_OPTIONAL: it came with the construct), destructs the group and
finalizes. Any mismatch exits non-zero; the libpmix.so.2 mapped must be the
one in OUR_LIB_DIR.

Usage: pmixrun -n N /usr/bin/python3 group_client.py OUR_LIB_DIR, with
LD_LIBRARY_PATH=OUR_LIB_DIR.
"""
import os
import sys

from dropin_common import info, mapped_libpmix

GROUP = "pypmix-grp"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: group_client.py OUR_LIB_DIR")
    ours = os.path.realpath(sys.argv[1])
    import pmix

    foreign = sorted(p for p in mapped_libpmix() if os.path.dirname(p) != ours)
    if foreign:
        sys.exit("a libpmix that is not ours is mapped: %s" % ", ".join(foreign))
    client = pmix.PMIxClient()
    rc, me = client.init([])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("init: %s" % client.error_string(rc))
    nspace, rank = me["nspace"], me["rank"]
    rc, size = client.get({"nspace": nspace, "rank": pmix.PMIX_RANK_WILDCARD},
                          pmix.PMIX_JOB_SIZE, [])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("get job size: %s" % client.error_string(rc))
    nprocs = size["value"]
    rc = client.put(pmix.PMIX_GLOBAL, "pygrp.key", {"value": "rank-%d" % rank,
                                                     "val_type": pmix.PMIX_STRING})
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("put: %s" % client.error_string(rc))
    if client.commit() != pmix.PMIX_SUCCESS:
        sys.exit("commit failed")
    peers = [{"nspace": nspace, "rank": r} for r in range(nprocs)]
    directives = [info(pmix.PMIX_GROUP_ASSIGN_CONTEXT_ID, True, pmix.PMIX_BOOL),
                  info(pmix.PMIX_TIMEOUT, 30, pmix.PMIX_INT)]
    rc, results = client.group_construct(GROUP, peers, directives)
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("rank %d: group_construct: %s" % (rank, client.error_string(rc)))
    # The binding's key constants are bytes; the results' keys are str.
    keys = {r.get("key"): r.get("value") for r in results}
    members = keys.get("pmix.grp.mbrs") or {}
    if keys.get("pmix.grp.id") != GROUP or "pmix.grp.ctxid" not in keys \
            or [m.get("rank") for m in members.get("array", [])] != list(range(nprocs)):
        sys.exit("rank %d: construct results %r" % (rank, results))
    for r in range(nprocs):
        rc, val = client.get({"nspace": nspace, "rank": r}, "pygrp.key",
                             [info(pmix.PMIX_OPTIONAL, True, pmix.PMIX_BOOL)])
        if rc != pmix.PMIX_SUCCESS or val.get("value") != "rank-%d" % r:
            sys.exit("rank %d: key of rank %d: %s %r" % (rank, r, client.error_string(rc), val))
    rc = client.group_destruct(GROUP, [])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit("rank %d: group_destruct: %s" % (rank, client.error_string(rc)))
    if client.finalize([]) != pmix.PMIX_SUCCESS:
        sys.exit("finalize failed")
    # One write(2) per line: the ranks share pmixrun's stdout pipe, and print()
    # may write the text and its newline separately (PYTHONUNBUFFERED).
    os.write(1, ("python group ok: rank %d, context id %s\n" % (rank, keys["pmix.grp.ctxid"])).encode())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
