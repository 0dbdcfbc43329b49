#!/usr/bin/env python3
"""Build one C probe twice, against the reference PMIx (OpenPMIx 4.2.2 from
Debian's libpmix-dev) and against ours, run both, require the same output.

Used by abi_probe (layout_probe.c: headers only) and runtime_probe
(helper_probe.c: also linked to a libpmix). Each difference is reported line by
line, so the failure names the type, member, constant or behaviour that broke.

Usage:
  probe_compare.py --cc CC --source FILE --workdir DIR
                   --reference-include DIR --ours-include DIR
                   [--reference-lib LIB --ours-lib LIB]   link each to its library
                                                          and pass the library's
                                                          directory as argv[1]
                   [--flag FLAG]...        extra compiler flag for both builds
                   [--ours-env K=V]... [--reference-env K=V]...  environment of each run

The reference headers come in with -isystem: their own warnings are not ours
to fix; our headers are built with every warning an error.
"""
import argparse
import difflib
import os
import subprocess
import sys

WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def build_and_run(args, side, include, lib, env_pairs):
    exe = os.path.join(args.workdir, "%s_%s" % (os.path.splitext(os.path.basename(args.source))[0], side))
    cmd = [args.cc] + WARNINGS + list(args.flag)
    cmd += ["-isystem" if side == "reference" else "-I", include, args.source, "-o", exe]
    if lib:
        cmd += [lib, "-Wl,-rpath," + os.path.dirname(os.path.abspath(lib))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: the probe does not build against the %s headers (%s):\n%s\n%s" %
                 (side, include, " ".join(cmd), r.stderr))
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)  # each binary finds its own library by its RUNPATH
    env.pop("LD_PRELOAD", None)
    for pair in env_pairs:
        k, _, v = pair.partition("=")
        env[k] = v
    run = [exe] + ([os.path.dirname(os.path.abspath(lib))] if lib else [])
    r = subprocess.run(run, capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        sys.exit("FAIL: the probe built against the %s headers exited with %d:\n%s%s" %
                 (side, r.returncode, r.stdout, r.stderr))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--reference-include", required=True)
    ap.add_argument("--ours-include", required=True)
    ap.add_argument("--reference-lib")
    ap.add_argument("--ours-lib")
    ap.add_argument("--flag", action="append", default=[])
    ap.add_argument("--ours-env", action="append", default=[])
    ap.add_argument("--reference-env", action="append", default=[])
    args = ap.parse_args()
    if bool(args.reference_lib) != bool(args.ours_lib):
        sys.exit("FAIL: give both --reference-lib and --ours-lib, or neither")
    for path in [args.reference_include, args.source] + ([args.reference_lib] if args.reference_lib else []):
        if not os.path.exists(path):
            sys.exit("FAIL: %s is missing (the reference comes from libpmix-dev: scripts/install-deps.sh)" % path)
    os.makedirs(args.workdir, exist_ok=True)

    reference = build_and_run(args, "reference", args.reference_include, args.reference_lib, args.reference_env)
    ours = build_and_run(args, "ours", args.ours_include, args.ours_lib, args.ours_env)
    name = os.path.basename(args.source)
    with open(os.path.join(args.workdir, "reference.txt"), "w") as f:
        f.write(reference)
    with open(os.path.join(args.workdir, "ours.txt"), "w") as f:
        f.write(ours)
    if not reference.strip():
        sys.exit("FAIL: the reference build of %s printed nothing" % name)
    if reference == ours:
        print("%s: %d lines, ours equal the reference's (%s)" %
              (name, len(reference.splitlines()), args.reference_include))
        return 0
    diff = difflib.unified_diff(reference.splitlines(), ours.splitlines(), "reference (OpenPMIx 4.2.2)", "ours",
                                lineterm="", n=0)
    print("FAIL: %s prints differently when built against ours:" % name)
    for line in diff:
        print("  " + line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
