"""python_import: Debian's python3-pmix must import against our libpmix.so.2.

The binding resolves all of its PMIx_* symbols when it is imported, so a
missing export fails the import. Usage: python_import.py OUR_LIB_DIR (with
LD_LIBRARY_PATH=OUR_LIB_DIR). Checks /proc/self/maps to prove the
libpmix.so.2 in the process is ours, not Debian's.
"""
import os
import sys


def mapped_libpmix():
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.basename(fields[5]).startswith("libpmix.so"):
                paths.add(os.path.realpath(fields[5]))
    return paths


def main():
    ours = os.path.realpath(sys.argv[1])
    import pmix  # noqa: F401  (the import is the test)

    loaded = mapped_libpmix()
    if not loaded:
        sys.exit("import pmix succeeded but no libpmix.so is mapped")
    foreign = [p for p in loaded if os.path.dirname(p) != ours]
    if foreign:
        sys.exit("import pmix loaded a libpmix that is not ours: %s (ours: %s)" % (", ".join(sorted(foreign)), ours))
    version = pmix.PMIxClient().get_version()
    print("import pmix OK with %s; PMIx_Get_version() = %s" % (", ".join(sorted(loaded)), version))


if __name__ == "__main__":
    main()
