#!/bin/bash
# Client-side PMIx figures, ours next to OpenPMIx 4.2.2 (Debian), from ONE
# client source (pmix_bench.c) built twice:
#   ours:     our headers + <build dir>/lib/libpmix.so.2, run under our pmixrun
#   OpenPMIx: /usr/lib/x86_64-linux-gnu/pmix2/{include,lib}, run under Open MPI's
#             mpirun (ORTE hosts OpenPMIx's server through its ext3x component)
#
# usage: bench/run.sh <our build dir> [-n NPROCS] [-r REPEATS] [-s SCALE]
#   -n  processes per job (default 16)
#   -r  runs of each variant, alternating; the table shows the median (default 3)
#   -s  divide every iteration count by SCALE (default 1 = full run)
# Needs: cc, python3, mpirun (openmpi-bin) and libpmix-dev. Prints figures only;
# nothing here asserts on time. Figures on a shared 2-core machine are noisy:
# look at /proc/loadavg (printed before and after) and repeat.
set -euo pipefail

usage() { echo "usage: $0 <our build dir> [-n NPROCS] [-r REPEATS] [-s SCALE]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=16 REPS=3 SCALE=1
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    -s) SCALE=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2
CC=${CC:-cc}
for f in "$BUILD/lib/libpmix.so" "$BUILD/bin/pmixrun" "$OPMIX/include/pmix.h" "$OPMIX/lib/libpmix.so"; do
  [ -e "$f" ] || { echo "$0: missing $f" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun not found (apt install openmpi-bin)" >&2; exit 1; }

W=$(mktemp -d /tmp/pmix_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
CFLAGS="-O2 -Wall -Wextra"
$CC $CFLAGS -I"$SRC/include" "$HERE/pmix_bench.c" -o "$W/pmix_bench_ours" \
    -L"$BUILD/lib" -lpmix -Wl,-rpath,"$BUILD/lib"
$CC $CFLAGS -I"$OPMIX/include" "$HERE/pmix_bench.c" -o "$W/pmix_bench_openpmix" \
    -L"$OPMIX/lib" -lpmix -Wl,-rpath,"$OPMIX/lib"

# Each variant sees only its own library: no LD_LIBRARY_PATH, no PMIx/MCA
# settings inherited from the caller.
UNSET="-u LD_LIBRARY_PATH -u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"

run_ours() {
  env $UNSET timeout 600 "$BUILD/bin/pmixrun" -n "$NP" --timeout 550 \
      "$W/pmix_bench_ours" "$SCALE"
}
run_openpmix() {
  env $UNSET timeout 600 mpirun -np "$NP" --oversubscribe --allow-run-as-root \
      --mca pmix ext3x "$W/pmix_bench_openpmix" "$SCALE"
}

echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
for ((i = 1; i <= REPS; ++i)); do
  echo "--- run $i/$REPS: ours"
  run_ours | tee "$W/ours.$i"
  echo "--- run $i/$REPS: OpenPMIx 4.2.2"
  run_openpmix | tee "$W/openpmix.$i"
done
echo "load after:  $(cat /proc/loadavg)"
echo

python3 - "$W" "$REPS" "$NP" << 'EOF'
import statistics, sys
w, reps, np = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def results(variant):
    runs = []
    for i in range(1, reps + 1):
        vals = {}
        for line in open(f"{w}/{variant}.{i}"):
            p = line.split()
            if len(p) == 3 and p[0] == "RESULT":
                vals[p[1]] = int(p[2])
        runs.append(vals)
    return runs

ours, theirs = results("ours"), results("openpmix")

def med(runs, key):
    v = [r[key] for r in runs if key in r]
    return statistics.median(v) if v else None

def fmt(ns):
    if ns is None: return "-"
    if ns >= 1e6: return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.3f} us"

rows = [  # key, label, target (ns), OpenPMIx figure from the issue
    ("get_job", "PMIx_Get job-level key", 1e3, "175 us"),
    ("get_peer", "PMIx_Get peer key after collecting fence", 1e3, "221 us"),
    ("fence", "PMIx_Fence without data", 150e3, "640 us"),
    ("commit64k", "PMIx_Commit of one 64 KiB value", 300e3, "19 ms"),
    ("init", "PMIx_Init (median over ranks)", 3e6, "11 ms"),
    ("init_max", "PMIx_Init (slowest rank)", None, ""),
    ("fence_collect", "first collecting fence (1 call)", None, ""),
]
print(f"{np} processes, median of {reps} runs (each run: rank 0's median over many calls)")
hdr = f"{'':42} {'ours':>12} {'OpenPMIx':>12} {'target':>10} {'issue':>8}  ours meets target"
print(hdr)
print("-" * len(hdr))
for key, label, target, issue in rows:
    o, t = med(ours, key), med(theirs, key)
    verdict = "" if target is None or o is None else ("yes" if o <= target else "NO")
    print(f"{label:42} {fmt(o):>12} {fmt(t):>12} {fmt(target) if target else '':>10} {issue:>8}  {verdict}")
EOF
