#!/usr/bin/env python3
"""A hostile local peer of the server (docs/security.md), run as a rank of
pmixrun: it reads the server's URIs and the job secret from its environment
(as any process of the job could) and speaks the wire protocol itself
(framework/wire/frame.hpp, protocol.hpp) over the transport PMIX_MCA_ptl names.

usage: hostile_peer.py MODE [CLIENT]
  flood      (run under a lowered RLIMIT_NOFILE) opens idle connections until
             the server's descriptors are exhausted and beyond, holds them,
             closes most, then runs CLIENT (a real PMIx client, as this rank)
             which must initialize. The server's log lines about the
             exhaustion are counted by the test (run_case.py).
  bigframes  8 connections each announce a 200 MiB frame before any
             handshake and send 24 MiB of it; the server's peak memory (VmHWM
             of pmixrun, our parent) must stay bounded.
  zipbomb    a compressed handshake that inflates to 200 MiB: dropped
             without inflating (peak memory bounded), the server still serves.
  role       a handshake with an unknown role is refused (BAD_PARAM).
  refusals   an unknown namespace and a known one with a wrong secret get the
             same refusal: nothing says whether the namespace exists.
  protocol   a handshake of a protocol version newer than the server's (3) or
             of none (0) is refused with NOT_SUPPORTED naming the versions;
             one of version 1 (a client before commits carried flags) is
             accepted (every real client speaks the server's own, 2).
Prints "hostile MODE ok" when the server behaved."""
import os
import resource
import socket
import struct
import subprocess
import sys
import zlib

HANDSHAKE = 1
ROLE_CLIENT, ROLE_TOOL = 1, 2
PMIX_ERR_BAD_PARAM = -27
PMIX_ERR_INVALID_CRED = -12
PMIX_ERR_NOT_SUPPORTED = -47
MiB = 1024 * 1024


def fail(msg):
    print(f"hostile: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def server_uri():
    ptl = os.environ.get("PMIX_MCA_ptl", "usock")
    uris = os.environ["PMIXPP_SERVER_URIS"].split(",")
    want = "tcp4://" if ptl == "tcp" else "usock://"
    for u in uris:
        if u.startswith(want):
            return u
    fail(f"no {want} URI in {uris}")


def connect(uri):
    if uri.startswith("usock://"):
        path = uri[len("usock://"):]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("\0" + path[1:] if path.startswith("@") else path)
    else:
        host, port = uri[len("tcp4://"):].rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect((host, int(port)))
    return s


def header(command, length, flags=0, tag=1):
    return struct.pack("<BBHII", 1, flags, command, tag, length)


def pstr(b):
    return struct.pack("<I", len(b)) + b


def handshake_body(nspace, rank, secret, role=ROLE_CLIENT, protocol=1):
    return (struct.pack("<IB", protocol, role) + pstr(nspace.encode()) + struct.pack("<I", rank) +
            pstr(secret.encode()) + struct.pack("<IIIQ", os.getuid(), os.getgid(), os.getpid(), 0))


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def read_reply(s):
    """(status, reason) of the reply frame, or None when the server closed."""
    h = recv_exact(s, 12)
    if h is None:
        return None
    _, _, _, _, length = struct.unpack("<BBHII", h)
    body = recv_exact(s, length)
    if body is None or len(body) < 8:
        return None
    status, n = struct.unpack("<iI", body[:8])
    return status, body[8:8 + n].decode(errors="replace")


def handshake(uri, body, keep=False):
    """Sends one handshake on a new connection: (reply, the socket if keep else None)."""
    s = connect(uri)
    s.settimeout(60)
    s.sendall(header(HANDSHAKE, len(body)) + body)
    r = read_reply(s)
    if keep:
        return r, s
    s.close()
    return r, None


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    fail("no VmHWM")


def me():
    return os.environ["PMIX_NAMESPACE"], int(os.environ["PMIX_RANK"]), os.environ[
        "PMIXPP_JOB_SECRET"]


def still_serves(uri):
    """A handshake for this rank with a wrong secret is answered: the server is alive."""
    nspace, rank, _ = me()
    r, _ = handshake(uri, handshake_body(nspace, rank, "x" * 32))
    if r is None or r[0] != PMIX_ERR_INVALID_CRED:
        fail(f"the server no longer answers a handshake: {r}")


def flood(uri, client):
    server = os.getppid()
    with open(f"/proc/{server}/limits") as f:
        limit = next(int(l.split()[3]) for l in f if l.startswith("Max open files"))
    # Our own limit was lowered with pmixrun's; take the hard limit back.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held = [connect(uri) for _ in range(limit + 40)]
    # Exhausted: the server holds as many descriptors as it may. Bounded by
    # the test's timeout.
    while len(os.listdir(f"/proc/{server}/fd")) < limit:
        os.sched_yield()
    # Hold the episode for a while (the server must idle through it, not spin).
    for s in held:
        s.setblocking(True)
    import time
    time.sleep(1.0)
    # Free most (those accepted first), keep the rest open, and a real client
    # of this job gets in.
    for s in held[:limit]:
        s.close()
    rc = subprocess.run([client], timeout=60).returncode
    if rc != 0:
        fail(f"the client's PMIx_Init failed while other idle connections stay (rc {rc})")
    for s in held[limit:]:
        s.close()


def bigframes(uri):
    server = os.getppid()
    before = peak_kib(server)
    conns = [connect(uri) for _ in range(8)]
    size = 200 * MiB
    chunk = b"\0" * MiB
    for s in conns:
        s.sendall(header(HANDSHAKE, size))
    for s in conns:  # all 8 held open at once
        try:
            for _ in range(24):
                s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server dropped it: what we want
    still_serves(uri)  # after it, the server has read what we sent
    grown = (peak_kib(server) - before) // 1024
    for s in conns:
        s.close()
    print(f"hostile: server peak memory grew by {grown} MiB", flush=True)
    if grown > 64:
        fail(f"the server buffered unauthenticated frames: peak grew by {grown} MiB")


def zipbomb(uri):
    server = os.getppid()
    nspace, rank, secret = me()
    body = handshake_body(nspace, rank, secret)
    size = 200 * MiB
    z = zlib.compressobj(9)
    parts = [struct.pack("<Q", size), z.compress(body)]
    zeros = b"\0" * MiB
    for _ in range(size // MiB):
        parts.append(z.compress(zeros))
    parts.append(z.flush())
    payload = b"".join(parts)
    # The receiver refuses a stream shorter than deflate's best ratio allows
    # (wire/compress.hpp) before inflating: pad past it. The padding only
    # fails the stream after it was inflated.
    floor = (len(body) + size) // 1032 + 16
    if len(payload) - 8 < floor:
        payload += b"\0" * (floor - (len(payload) - 8))
    # The real body is larger than `size` by len(body): declare the real size.
    payload = struct.pack("<Q", len(body) + size) + payload[8:]
    before = peak_kib(server)
    s = connect(uri)
    s.settimeout(60)
    try:
        s.sendall(header(HANDSHAKE, len(payload), flags=1) + payload)
        r = read_reply(s)
    except (BrokenPipeError, ConnectionResetError):
        r = None
    s.close()
    if r is not None:
        fail(f"the compressed handshake was answered: {r}")
    still_serves(uri)
    grown = (peak_kib(server) - before) // 1024
    print(f"hostile: server peak memory grew by {grown} MiB", flush=True)
    if grown > 64:
        fail(f"the server inflated an unauthenticated frame: peak grew by {grown} MiB")


def role(uri):
    nspace, rank, secret = me()
    r, _ = handshake(uri, handshake_body(nspace, rank, secret, role=77))
    if r is None or r[0] != PMIX_ERR_BAD_PARAM:
        fail(f"a handshake with role 77 got {r}, expected BAD_PARAM")
    still_serves(uri)


def protocol(uri):
    nspace, rank, secret = me()
    for version in (3, 0):
        r, _ = handshake(uri, handshake_body(nspace, rank, secret, protocol=version))
        if r is None or r[0] != PMIX_ERR_NOT_SUPPORTED or f"protocol version {version}," not in r[1] \
                or "this server speaks 1 to 2" not in r[1]:
            fail(f"a handshake of protocol version {version} got {r}, expected NOT_SUPPORTED "
                 "naming the versions")
    # Version 1, this rank's one connection (every real client speaks 2).
    r, s = handshake(uri, handshake_body(nspace, rank, secret, protocol=1), keep=True)
    if r is None or r[0] != 0:
        fail(f"a handshake of protocol version 1 got {r}, expected success")
    still_serves(uri)
    s.close()


def refusals(uri):
    nspace, rank, _ = me()
    answers = []
    for ns, rk in ((nspace, rank), ("no.such.namespace", 0), (nspace, 4242)):
        answers.append(handshake(uri, handshake_body(ns, rk, "y" * 32))[0])
    if answers[0] is None or answers[0][0] != PMIX_ERR_INVALID_CRED:
        fail(f"a wrong secret got {answers[0]}")
    if answers[1] != answers[0] or answers[2] != answers[0]:
        fail(f"refusals differ by what exists: {answers}")


def main():
    if len(sys.argv) < 2:
        fail("usage: hostile_peer.py MODE [CLIENT]")
    mode = sys.argv[1]
    uri = server_uri()
    if mode == "flood":
        flood(uri, sys.argv[2])
    elif mode == "bigframes":
        bigframes(uri)
    elif mode == "zipbomb":
        zipbomb(uri)
    elif mode == "role":
        role(uri)
    elif mode == "refusals":
        refusals(uri)
    elif mode == "protocol":
        protocol(uri)
    else:
        fail(f"unknown mode {mode}")
    print(f"hostile {mode} ok", flush=True)


main()
