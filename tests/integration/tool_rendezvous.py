#!/usr/bin/env python3
"""Rendezvous files and the tool's connection rules (docs/tools.md), with
real servers (rdv_host.c) and real tools (rdv_tool.c) in a private
directory tree. Each case prints "case <name> ok"; the first failure prints
"FAILED: ..." and exits 1.

usage: tool_rendezvous.py RDV_HOST RDV_TOOL"""
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HOST, TOOL = sys.argv[1], sys.argv[2]
top = tempfile.mkdtemp(prefix="pmixpp-rdv.")
SYS, SESS, OTHER = (os.path.join(top, d) for d in ("sys", "sess", "other"))
for d in (SYS, SESS, OTHER):
    os.mkdir(d)
env = {k: v for k, v in os.environ.items()
       if not k.startswith("PMIX_SERVER_URI") and k not in ("PMIXPP_SERVER_URIS", "PMIX_NAMESPACE", "PMIX_RANK")}
env["TMPDIR"] = OTHER  # nothing falls back to the real /tmp
HOSTNAME = socket.gethostname() or "localhost"
SYSFILE = os.path.join(SYS, "pmixpp.sys." + HOSTNAME)
hosts = []


def fail(msg):
    print("FAILED: " + msg, flush=True)
    for h in hosts:
        if h.poll() is None:
            h.kill()
    shutil.rmtree(top, ignore_errors=True)
    sys.exit(1)


def session_file(tag, d=SESS):
    return os.path.join(d, "pmixpp.%s.tool.%s" % (HOSTNAME, tag))


def read_line(proc, timeout=30):
    """One stdout line, or fail after `timeout` seconds (the bound, not a sleep)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        fail("no output from %s within %d s" % (proc.args, timeout))
    return proc.stdout.readline().strip()


def start_host(*args, expect_ready=True):
    proc = subprocess.Popen([HOST, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    hosts.append(proc)
    line = read_line(proc)
    if expect_ready:
        if not line.startswith("rdv_host ready"):
            fail("host %s did not start: %r" % (args, line))
        fields = dict(f.split("=", 1) for f in line.split()[2:])
        proc.server_pid = int(fields["pid"])
        proc.nspace = fields["nspace"]
    return proc, line


def stop_host(proc):
    proc.stdin.close()
    if read_line(proc) != "rdv_host done":
        fail("host did not finalize")
    proc.wait(timeout=30)


def tool(*args, timeout=60):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True, env=env, timeout=timeout)
    out = r.stdout.strip().splitlines()
    line = out[-1] if out else ""
    if not line.startswith("rdv_tool init "):
        fail("tool %s: %r %r" % (args, r.stdout, r.stderr))
    parts = line.split()
    return parts[2], parts[3], r.stderr


def expect_tool(case, args, status, nspace_prefix=None):
    st, ns, err = tool(*args)
    status = name(status)
    if st != status or (nspace_prefix is not None and not ns.startswith(nspace_prefix)):
        fail("%s: tool %s got %s %s, want %s %s\n%s" % (case, args, st, ns, status, nspace_prefix, err))
    return err


def servers_seen(*args):
    """PMIX_QUERY_AVAIL_SERVERS through a connected tool: 'ns*' for a system server."""
    r = subprocess.run([TOOL, "servers", *args], capture_output=True, text=True, env=env,
                       timeout=60)
    for line in r.stdout.splitlines():
        if line.startswith("rdv_tool servers "):
            parts = line.split()
            if parts[2] != name("PMIX_SUCCESS"):
                fail("PMIX_QUERY_AVAIL_SERVERS: %s" % line)
            return parts[3].split(",") if len(parts) > 3 else []
    fail("no servers line from %s: %r %r" % (args, r.stdout, r.stderr))


def parse(path):
    keys, uris = {}, []
    with open(path) as f:
        for line in f.read().splitlines():
            k, _, v = line.partition("=")
            if k == "uri":
                uris.append(v)
            else:
                keys[k] = v
    return keys, uris


def name(status):
    """PMIx_Error_string's spelling of a status macro name."""
    return status.replace("PMIX_ERR_", "").replace("PMIX_", "").replace("_", "-")


def ok(case):
    print("case %s ok" % case, flush=True)


DIRS = ("tmpdir=" + SESS, "systmpdir=" + SYS)

# 1. A system server: the one system file, 0600, every transport's URIs.
sysA, _ = start_host("sys", "nspace=sysA", *DIRS)
if not os.path.exists(SYSFILE):
    fail("no system rendezvous file " + SYSFILE)
if stat.S_IMODE(os.stat(SYSFILE).st_mode) != 0o600:
    fail("system file mode %o" % stat.S_IMODE(os.stat(SYSFILE).st_mode))
keys, uris = parse(SYSFILE)
if keys.get("nspace") != "sysA" or keys.get("pid") != str(sysA.server_pid) or keys.get("rank") != "0":
    fail("system file holds %r" % keys)
schemes = {u.split("://")[0] for u in uris}
want = {"usock", "tcp4"} if env.get("PMIX_MCA_ptl") is None else {env["PMIX_MCA_ptl"].replace("tcp", "tcp4")}
if not want <= schemes:
    fail("system file URIs %r lack %r" % (uris, want))
if os.listdir(SESS):
    fail("a system-only server wrote session files: %r" % os.listdir(SESS))
ok("system_file_written")

# 2. A second live system server on the node fails its init.
_, line = start_host("sys", "nspace=sysB", *DIRS, expect_ready=False)
if line != "rdv_host init " + name("PMIX_ERR_RESOURCE_BUSY"):
    fail("second system server: %r" % line)
if parse(SYSFILE)[0].get("pid") != str(sysA.server_pid):
    fail("the second system server touched the first one's file")
ok("second_system_server_refused")

# 3. Session servers: pid- and nspace-tagged files, mode from PMIX_SOCKET_MODE.
sessC, _ = start_host("session", "nspace=sessC", "mode=640", *DIRS)
for tag in (str(sessC.server_pid), "sessC"):
    p = session_file(tag)
    if not os.path.exists(p):
        fail("no session file " + p)
    if stat.S_IMODE(os.stat(p).st_mode) != 0o640:
        fail("session file mode %o, want 640" % stat.S_IMODE(os.stat(p).st_mode))
    if parse(p)[0].get("nspace") != "sessC":
        fail("session file content " + p)
ok("session_files_written")

# 4. The connection rules with a system and a session server.
expect_tool("to_system", ["sys", *DIRS], "SUCCESS", "sysA.tool.")
expect_tool("no_direction_prefers_system", [*DIRS], "SUCCESS", "sysA.tool.")
expect_tool("system_first", ["sysfirst", *DIRS], "SUCCESS", "sysA.tool.")
expect_tool("by_pid", ["pid=%d" % sessC.server_pid, *DIRS], "SUCCESS", "sessC.tool.")
expect_tool("by_nspace", ["nspace=sessC", *DIRS], "SUCCESS", "sessC.tool.")
expect_tool("system_by_nspace", ["nspace=sysA", *DIRS], "SUCCESS", "sysA.tool.")
expect_tool("attachment_file", ["file=" + session_file("sessC")], "SUCCESS", "sessC.tool.")
user_file = os.path.join(OTHER, "attach")
with open(user_file, "w") as f:
    f.write(parse(session_file("sessC"))[1][0] + "\n")  # a bare URI, as a user writes it
expect_tool("attachment_file_bare_uri", ["file=" + user_file], "SUCCESS", "sessC.tool.")
expect_tool("by_uri", ["uri=" + parse(SYSFILE)[1][0]], "SUCCESS", "sysA.tool.")
expect_tool("unknown_nspace", ["nspace=nobody", *DIRS], "PMIX_ERR_NOT_FOUND")
ok("connection_rules")
if servers_seen(*DIRS) != ["sysA*", "sessC"]:
    fail("PMIX_QUERY_AVAIL_SERVERS: %r" % servers_seen(*DIRS))
ok("avail_servers")

# 5. The system server finalizes: its file goes; TO_SYSTEM fails even though
#    a session server exists; no direction and SYSTEM_FIRST reach the session server.
stop_host(sysA)
if os.path.exists(SYSFILE):
    fail("system file left after finalize")
expect_tool("to_system_absent", ["sys", *DIRS], "PMIX_ERR_UNREACH")
expect_tool("to_system_absent_optional", ["sys", "optional", *DIRS], "SUCCESS")
expect_tool("single_session_server", [*DIRS], "SUCCESS", "sessC.tool.")
expect_tool("system_first_falls_back", ["sysfirst", *DIRS], "SUCCESS", "sessC.tool.")
ok("system_server_gone")

# 6. Two session servers and no pid: the error names both candidates.
sessD, _ = start_host("tool", "nspace=sessD", *DIRS)
err = expect_tool("several_session_servers", [*DIRS], "PMIX_ERR_BAD_PARAM")
for h in (sessC, sessD):
    if "pid %d (namespace %s)" % (h.server_pid, h.nspace) not in err:
        fail("the error does not name %s: %r" % (h.nspace, err))
expect_tool("several_by_pid", ["pid=%d" % sessD.server_pid, *DIRS], "SUCCESS", "sessD.tool.")
ok("several_session_servers")

# 7. A killed server's files are skipped, and a dead system server's file replaced.
sessD.kill()
sessD.wait()
if not os.path.exists(session_file(str(sessD.server_pid))):
    fail("SIGKILL removed the session file?")
expect_tool("dead_by_pid", ["pid=%d" % sessD.server_pid, *DIRS], "PMIX_ERR_NOT_FOUND")
expect_tool("dead_skipped", [*DIRS], "SUCCESS", "sessC.tool.")
with open(SYSFILE, "w") as f:  # as a killed system server leaves it
    f.write("pmixpp-rendezvous=1\nnspace=ghost\nrank=0\npid=%d\nuri=usock://@nobody\n" % sessD.server_pid)
expect_tool("dead_system_skipped", [*DIRS], "SUCCESS", "sessC.tool.")
if servers_seen(*DIRS) != ["sessC"]:
    fail("PMIX_QUERY_AVAIL_SERVERS lists dead servers: %r" % servers_seen(*DIRS))
sysE, _ = start_host("sys", "nspace=sysE", *DIRS)
if not os.path.exists(session_file(str(sessD.server_pid))):
    fail("a system-only server touched the session directory")
if parse(SYSFILE)[0].get("pid") != str(sysE.server_pid):
    fail("the stale system file was not replaced")
expect_tool("replaced_system", ["sys", *DIRS], "SUCCESS", "sysE.tool.")
stop_host(sysE)
# A new session server removes the dead one's files (both tags).
sessF, _ = start_host("session", "nspace=sessF", *DIRS)
for tag in (str(sessD.server_pid), "sessD"):
    if os.path.exists(session_file(tag)):
        fail("the killed server's session file %s is still there" % tag)
stop_host(sessF)
ok("dead_servers")

# 8. Retries: the tool waits for a server that starts after it.
late = subprocess.Popen([TOOL, "nspace=late", "retries=60", "delay=1", *DIRS],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
lateH, _ = start_host("session", "nspace=late", *DIRS)
out, _ = late.communicate(timeout=90)
if "rdv_tool init SUCCESS late.tool." not in out:
    fail("a retrying tool did not reach the late server: %r" % out)
stop_host(lateH)
ok("retries")

stop_host(sessC)
for tag in (str(sessC.server_pid), "sessC"):
    if os.path.exists(session_file(tag)):
        fail("session file left after finalize: " + tag)
ok("session_files_removed")
shutil.rmtree(top, ignore_errors=True)
print("tool_rendezvous ok", flush=True)
