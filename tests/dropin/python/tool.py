"""dropin.python_tool: Debian's python3-pmix PMIxTool on our libpmix.so.2 as a
tool outside a pmixrun job (docs/tools.md).

Usage (tool_target.c starts it from rank 0 of a 2-rank job): tool.py OUR_LIB_DIR
PMIXRUN_PID JOB_NSPACE. Connects by the server's pid (PMIX_SERVER_PIDINFO),
queries PMIX_QUERY_NAMESPACES (the job is listed) and PMIX_QUERY_PROC_TABLE
of the job (two entries, ranks 0 and 1), and finalizes. The libpmix.so.2
mapped into this process must be the one in OUR_LIB_DIR. Prints
"python tool ok"; any mismatch exits non-zero."""
import os
import sys

from dropin_common import info, mapped_libpmix


def fail(msg):
    print("python tool FAILED: " + msg, flush=True)
    sys.exit(1)


def answers(results):
    """The key -> value pairs inside the PMIX_QUERY_RESULTS entry (a DATA_ARRAY
    of INFO, which the binding unloads as {"type": ..., "array": [...]})."""
    out = {}
    for r in results:
        v = r["value"]
        if isinstance(v, dict) and isinstance(v.get("array"), list) and \
                all(isinstance(a, dict) and "key" in a for a in v["array"]):
            for a in v["array"]:
                out[a["key"]] = a["value"]
        else:
            out[r["key"]] = v
    return out


libdir, server_pid, nspace = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import pmix  # noqa: E402  (after the argument check: the import starts threads)

def key(k):
    """The binding's key constants are bytes; the results it unloads use str."""
    return k.decode() if isinstance(k, bytes) else k


ours = os.path.realpath(os.path.join(libdir, "libpmix.so.2"))
tool = pmix.PMIxTool()
rc, me = tool.init([info(pmix.PMIX_SERVER_PIDINFO, server_pid, pmix.PMIX_PID)])
if rc != pmix.PMIX_SUCCESS:
    fail("init: %s" % tool.error_string(rc))
if mapped_libpmix() != {ours}:
    fail("mapped %s, not %s" % (mapped_libpmix(), ours))

rc, results = tool.query([{"keys": [pmix.PMIX_QUERY_NAMESPACES], "qualifiers": []}])
if rc != pmix.PMIX_SUCCESS:
    fail("query namespaces: %s" % tool.error_string(rc))
found = answers(results)
if nspace not in str(found.get(key(pmix.PMIX_QUERY_NAMESPACES), "")).split(","):
    fail("namespaces %r lack %s" % (found, nspace))

rc, results = tool.query([{"keys": [pmix.PMIX_QUERY_PROC_TABLE],
                           "qualifiers": [info(pmix.PMIX_NSPACE, nspace, pmix.PMIX_STRING)]}])
if rc != pmix.PMIX_SUCCESS:
    fail("query proc table: %s" % tool.error_string(rc))
table = answers(results).get(key(pmix.PMIX_QUERY_PROC_TABLE))
print("proc table:", table, flush=True)
entries = table["array"] if isinstance(table, dict) and "array" in table else table
if not entries or len(entries) != 2:
    fail("proc table %r: want 2 entries" % (table,))
ranks = sorted(e["proc"]["rank"] for e in entries)
if ranks != [0, 1] or any(key(e["proc"]["nspace"]) != nspace or e["pid"] <= 0 or
                          not key(e["executable"]).endswith("tool_target") for e in entries):
    fail("proc table entries %r" % (entries,))
rc = tool.finalize()
if rc != pmix.PMIX_SUCCESS:
    fail("finalize: %s" % tool.error_string(rc))
print("python tool ok", flush=True)
os._exit(0)  # the binding's progress thread does not stop by itself
