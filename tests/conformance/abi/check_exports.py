#!/usr/bin/env python3
"""exported_symbols: the dynamic symbol table of libpmix.so.2 is what PMIx 4.2
binaries link against.

Checks, each failure named:
  - SONAME is libpmix.so.2;
  - every PMIx_* function of pmix_symbols_usage.tsv is defined, as a function;
  - nothing else is exported but PMIx_* and C++ names of namespace pmixpp
    (functions and objects, const member functions included, and their
    typeinfo, typeinfo name and vtable: what the export map lets out), plus the
    descriptors of components compiled into the core (pmix_mca_<fw>_<comp>_component,
    which the export map allows for PMIXPP_COMPONENTS_STATIC builds);
  - no symbol versioning: no version definitions, no name@VERSION.

Usage: check_exports.py --lib libpmix.so.2 --symbols pmix_symbols_usage.tsv
                        [--nm nm] [--readelf readelf] [--cxxfilt c++filt]
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
    ap.add_argument("--symbols", required=True)
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
        lines = open(args.symbols, encoding="utf-8").readlines()
    except OSError as e:
        sys.exit("FAIL: cannot read the symbol list (../shared/abi must sit beside the clone): %s" % e)
    for line in lines:
        name = line.split("\t", 1)[0].strip()
        if name.startswith("PMIx_"):
            wanted.append(name)
    if len(wanted) != 141:
        failures.append("%s lists %d PMIx_* functions, expected 141" % (args.symbols, len(wanted)))

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

    print("%s: %d dynamic symbols, %d required PMIx_* functions" % (args.lib, len(exported), len(wanted)))
    if failures:
        print("FAIL: %d problems:" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    print("exports are those of a PMIx 4.2 libpmix.so.2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
