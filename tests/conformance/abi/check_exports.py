#!/usr/bin/env python3
"""exported_symbols: the dynamic symbol table of libpmix.so.2 is what PMIx 4.2
binaries link against.

Checks, each failure named:
  - SONAME is libpmix.so.2;
  - every function of pmix42_functions.txt is defined, as a function;
  - that list is the reference's: with --reference-lib (Debian's OpenPMIx 4.2.2
    libpmix.so.2, from libpmix2), its defined PMIx_* functions are exactly those;
  - nothing else is exported but PMIx_* and C++ names of namespace pmixpp
    (functions and objects, const member functions included, and their
    typeinfo, typeinfo name and vtable: what the export map lets out), plus the
    descriptors of components compiled into the core (pmix_mca_<fw>_<comp>_component,
    which the export map allows for PMIXPP_COMPONENTS_STATIC builds);
  - no symbol versioning: no version definitions, no name@VERSION.

Usage: check_exports.py --lib libpmix.so.2 --functions pmix42_functions.txt
                        [--reference-lib libpmix.so.2] [--nm nm] [--readelf readelf]
                        [--cxxfilt c++filt]
"""
import argparse
import re
import subprocess
import sys

ALLOWED_C = re.compile(r"^(PMIx_\w+|pmix_mca_[a-z0-9]+_[a-z0-9_]+_component)$")
# Demangled C++ names the export map lets out (framework/libpmix.map).
ALLOWED_CXX = re.compile(r"^(pmixpp::|typeinfo for pmixpp::|typeinfo name for pmixpp::|vtable for pmixpp::)")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--functions", required=True)
    ap.add_argument("--reference-lib")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--cxxfilt", default="c++filt")
    args = ap.parse_args()
    failures = []

    dynamic = run([args.readelf, "-d", args.lib])
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]*)\]", dynamic)
    soname = m.group(1) if m else None
    if soname != "libpmix.so.2":
        failures.append("SONAME is %s, must be libpmix.so.2" % (soname or "absent"))

    versions = run([args.readelf, "-V", args.lib])
    if re.search(r"Version definition section", versions):
        failures.append("the library defines symbol versions (.gnu.version_d); 4.2 binaries bind unversioned")

    wanted = []
    try:
        lines = open(args.functions, encoding="utf-8").read().splitlines()
    except OSError as e:
        sys.exit("FAIL: cannot read the function list: %s" % e)
    for line in lines:
        words = line.split()
        if len(words) >= 2 and words[0] == "function":
            wanted.append(words[1])
    if len(wanted) != 141:
        failures.append("%s lists %d PMIx_* functions, expected 141" % (args.functions, len(wanted)))

    if args.reference_lib:
        reference = set()
        for line in run([args.nm, "-D", "--defined-only", args.reference_lib]).splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] in ("T", "W", "i") and parts[2].startswith("PMIx_"):
                reference.add(parts[2].split("@", 1)[0])
        for name in sorted(reference - set(wanted)):
            failures.append("%s is exported by the reference %s but missing from %s" % (name, args.reference_lib, args.functions))
        for name in sorted(set(wanted) - reference):
            failures.append("%s is listed in %s but the reference %s does not export it" % (name, args.functions, args.reference_lib))

    exported = {}
    for line in run([args.nm, "-D", "--defined-only", args.lib]).splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2]
        if "@" in name:
            failures.append("%s carries a symbol version" % name)
            name = name.split("@", 1)[0]
        exported[name] = kind

    for name in wanted:
        if name not in exported:
            failures.append("%s is not exported" % name)
        elif exported[name] not in ("T", "W", "i"):
            failures.append("%s is exported as '%s', not as a function" % (name, exported[name]))
    mangled = sorted(n for n in exported if n.startswith("_Z"))
    demangled = {}
    if mangled:
        r = subprocess.run([args.cxxfilt], input="\n".join(mangled) + "\n", capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("FAIL: %s: %s" % (args.cxxfilt, r.stderr.strip()))
        demangled = dict(zip(mangled, r.stdout.splitlines()))
    for name, kind in sorted(exported.items()):
        if ALLOWED_C.match(name):
            continue
        if name in demangled and ALLOWED_CXX.match(demangled[name]):
            continue
        shown = name if name not in demangled else "%s [%s]" % (name, demangled[name])
        failures.append("%s (%s) is exported but is neither PMIx_* nor in namespace pmixpp" % (shown, kind))

    print("%s: %d dynamic symbols, %d required PMIx_* functions%s" % (
        args.lib, len(exported), len(wanted), ", list checked against " + args.reference_lib if args.reference_lib else ""))
    if failures:
        print("FAIL: %d problems:" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    print("exports are those of a PMIx 4.2 libpmix.so.2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
