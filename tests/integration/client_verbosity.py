#!/usr/bin/env python3
"""client_base_verbose sets what the client library logs (framework/mca/README.md,
"Verbosity"): the parameter a user tries for the client, as for a framework.

usage: client_verbosity.py PMIXRUN HELLO PMIX_INFO

1. pmix_info --all lists client_base_verbose (and the other layers' own);
2. pmixrun -n 2 hello with no parameter: no info or debug line of pmix.client;
3. PMIX_MCA_client_base_verbose=1: each rank's PMIx_Init and PMIx_Finalize at
   info (2 + 2 lines), still no debug line;
4. =5: the same, plus each request and its reply at debug;
5. the same 1 from a parameter file (PMIX_MCA_mca_base_param_files) instead of
   the environment;
6. a value that is not a number: a warning naming the parameter, and nothing
   logged at info.
Every run is bounded (pmixrun --timeout, subprocess timeout)."""
import os
import re
import subprocess
import sys
import tempfile

pmixrun, hello, pmix_info = sys.argv[1:4]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PMIX_MCA_")}
    env.update(extra)
    return env


def run_hello(**extra):
    p = subprocess.run([pmixrun, "--timeout", "60", "-n", "2", hello], capture_output=True,
                       text=True, env=clean_env(**extra), timeout=120)
    check(p.returncode == 0, f"hello with {extra} exited {p.returncode}: {p.stderr}")
    return p.stderr.splitlines()


def step_ok(name, before):
    """Prints "client_verbosity <name> ok" when the step added no problem."""
    if len(problems) == before:
        print(f"client_verbosity {name} ok")


def count(lines, pattern):
    return sum(1 for l in lines if re.search(pattern, l))


INIT = r"^\[pmix\.client\] info: PMIx_Init: connected as \S+:[01]$"
FINI = r"^\[pmix\.client\] info: PMIx_Finalize: \S+:[01] disconnected \(SUCCESS\)$"
SENT = r"^\[pmix\.client\] debug: client: request [0-9]+ sent \(command [0-9]+, [0-9]+ bytes\)$"
REPLY = r"^\[pmix\.client\] debug: client: reply to request [0-9]+: "
ANY_LOW = r"^\[pmix\.client\] (info|debug|trace):"

# 1.
before = len(problems)
info = subprocess.run([pmix_info, "--all"], capture_output=True, text=True, env=clean_env(),
                      timeout=120)
check(info.returncode == 0, f"pmix_info --all exited {info.returncode}")
for layer in ("client", "server", "event", "runtime"):
    check(re.search(rf"\b{layer}_base_verbose\b", info.stdout) is not None,
          f"pmix_info --all does not list {layer}_base_verbose")
step_ok("pmix_info", before)

# 2.
before = len(problems)
quiet = run_hello()
check(count(quiet, ANY_LOW) == 0, "info/debug lines without the parameter: " +
      "; ".join(l for l in quiet if re.search(ANY_LOW, l)))
step_ok("default", before)

# 3.
before = len(problems)
v1 = run_hello(PMIX_MCA_client_base_verbose="1")
check(count(v1, INIT) == 2, f"verbose 1: {count(v1, INIT)} PMIx_Init lines, 2 expected")
check(count(v1, FINI) == 2, f"verbose 1: {count(v1, FINI)} PMIx_Finalize lines, 2 expected")
check(count(v1, r"^\[pmix\.client\] debug:") == 0, "verbose 1 logged at debug")
step_ok("info", before)

# 4.
before = len(problems)
# hello's collecting fence goes through the server's socket only without
# the fence areas (server/README.md, "Collecting fences through the barrier").
v5 = run_hello(PMIX_MCA_client_base_verbose="5", PMIX_MCA_wire_base_fence_areas="0")
check(count(v5, INIT) == 2 and count(v5, FINI) == 2, "verbose 5: Init/Finalize lines missing")
sent, replies = count(v5, SENT), count(v5, REPLY)
check(sent >= 2, f"verbose 5: {sent} request lines (each rank's collecting fence)")
check(replies >= 2, f"verbose 5: {replies} reply lines")
step_ok("debug", before)

# 5.
before = len(problems)
with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
    f.write("# client_verbosity.py\nclient_base_verbose = 1\n")
    conf = f.name
try:
    vf = run_hello(PMIX_MCA_mca_base_param_files=conf)
finally:
    os.unlink(conf)
check(count(vf, INIT) == 2, f"from a file: {count(vf, INIT)} PMIx_Init lines, 2 expected")
step_ok("file", before)

# 6.
before = len(problems)
bad = run_hello(PMIX_MCA_client_base_verbose="loud")
check(count(bad, r"client_base_verbose.*'loud'") >= 1,
      "a bad value is not reported: " + "; ".join(bad))
check(count(bad, ANY_LOW) == 0, "a bad value changed the verbosity")
step_ok("bad value", before)

for p in problems:
    print("client_verbosity FAILED: " + p)
sys.exit(1 if problems else 0)
