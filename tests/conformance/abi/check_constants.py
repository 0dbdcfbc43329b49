#!/usr/bin/env python3
"""constants_match_reference: every constant of the PMIx v4.2 public headers
(object-like #define PMIX_* and the enumerators of their typedef'd enums) must
exist in our headers with the same value.

Writes one C++ program that prints each constant, builds it once against the
reference headers (OpenPMIx 4.2.2, from libpmix-dev) and once against ours,
runs both and compares line by line. Each difference is reported by name.

Usage: check_constants.py --cxx g++ --reference DIR --ours DIR --workdir DIR
"""
import argparse
import os
import re
import subprocess
import sys

HEADERS = ["pmix_version.h", "pmix_common.h", "pmix_deprecated.h", "pmix.h", "pmix_server.h", "pmix_tool.h"]
# Not values: the export attribute and brace initializers.
SKIP = re.compile(r"^(PMIX_EXPORT|PMIX_.*_STATIC_INIT)$")


def collect(ref_dir):
    names, enumerators = [], []
    for h in HEADERS:
        path = os.path.join(ref_dir, h)
        if not os.path.exists(path):
            sys.exit("reference header %s is missing: install libpmix-dev (scripts/install-deps.sh)" % path)
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(PMIX_[A-Za-z0-9_]+)([ \t(]?)(.*)$", text, re.M):
            name, sep, body = m.group(1), m.group(2), m.group(3)
            if sep == "(":
                continue  # function-like macro
            if SKIP.match(name) or not body.strip() or body.strip().startswith("\\"):
                continue
            if name not in names:
                names.append(name)
        clean = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
        for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{([^}]*)\}", clean):
            for item in m.group(1).split(","):
                item = item.split("=")[0].strip()
                if item.startswith("PMIX_") and item not in enumerators:
                    enumerators.append(item)
    return names, enumerators


PROGRAM_HEAD = r"""
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <cstdio>
#include <type_traits>

static void show(const char *name, const char *value) { std::printf("%s = \"%s\"\n", name, value); }
template <typename T> static void show(const char *name, T value) {
    if constexpr (std::is_enum_v<T>) {
        std::printf("%s = %lld\n", name, static_cast<long long>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
        std::printf("%s = %.17g\n", name, static_cast<double>(value));
    } else if constexpr (std::is_signed_v<T>) {
        std::printf("%s = %lld\n", name, static_cast<long long>(value));
    } else {
        std::printf("%s = %llu\n", name, static_cast<unsigned long long>(value));
    }
}
static void missing(const char *name) { std::printf("%s (not defined)\n", name); }

int main() {
"""


def write_program(path, names, enumerators):
    with open(path, "w") as f:
        f.write(PROGRAM_HEAD)
        for n in names:
            f.write("#ifdef %s\n    show(\"%s\", %s);\n#else\n    missing(\"%s\");\n#endif\n" % (n, n, n, n))
        for n in enumerators:
            f.write("    show(\"%s\", %s);\n" % (n, n))
        f.write("    return 0;\n}\n")


def build_and_run(cxx, include_dir, src, exe):
    cmd = [cxx, "-std=c++20", "-w", "-I", include_dir, src, "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        errors = "\n".join(l for l in r.stderr.splitlines() if "error" in l)
        sys.exit("FAIL: the constants program does not compile against %s:\n%s" % (include_dir, errors or r.stderr))
    r = subprocess.run([exe], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s exited with %d" % (exe, r.returncode))
    values = {}
    for line in r.stdout.splitlines():
        name = line.split(" ", 1)[0]
        values[name] = line
    return values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    names, enumerators = collect(args.reference)
    src = os.path.join(args.workdir, "print_constants.cpp")
    write_program(src, names, enumerators)
    ref = build_and_run(args.cxx, args.reference, src, os.path.join(args.workdir, "constants_reference"))
    ours = build_and_run(args.cxx, args.ours, src, os.path.join(args.workdir, "constants_ours"))

    failures = []
    for name in names + enumerators:
        r, o = ref.get(name), ours.get(name)
        if r is None:
            failures.append("%s: not printed by the reference build" % name)
        elif r.endswith("(not defined)"):
            continue  # conditional in the reference; nothing to match
        elif o is None or o.endswith("(not defined)"):
            failures.append("%s: missing from our headers (reference: %s)" % (name, r.split(" = ", 1)[-1]))
        elif r != o:
            failures.append("%s: ours %s, reference %s" % (name, o.split(" = ", 1)[-1], r.split(" = ", 1)[-1]))
    print("checked %d macros and %d enumerators of the v4.2 headers" % (len(names), len(enumerators)))
    if failures:
        print("FAIL: %d constants differ from the reference:" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    print("all equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
