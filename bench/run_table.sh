#!/bin/bash
# Issue 17's table in one command: fence_data_bench.c built ONCE (against
# Debian's OpenPMIx 4.2.2 headers; our library is ABI-compatible) and run
#   openpmix: Debian mpirun, LD_LIBRARY_PATH = a copy of Debian's libpmix.so.2
#   ours:     the same mpirun, LD_LIBRARY_PATH = <our build dir>/lib
#   pmixrun:  our pmixrun, LD_LIBRARY_PATH = <our build dir>/lib
# in alternating rounds (openpmix, ours, pmixrun, openpmix, ...), so that the
# machine's load hits all three alike (run_mpirun.sh does the same for
# `mpirun hello`).
#
# usage: bench/run_table.sh <our build dir> [-n NPROCS] [-r ROUNDS] [-s SCALE] [-H HISTORY]
#   -n  processes (default 16)      -r  rounds of each variant (default 5)
#   -s  divide the iteration counts (default 1)
#   -H  rounds of the new-key-every-round part (default 300)
# Prints each run's RESULT lines, the load before/after, and the table: the
# median over the rounds of each figure (rank 0's median over its calls;
# Init and Finalize: the median over the ranks). Nothing asserts on time.
set -euo pipefail

usage() { echo "usage: $0 <our build dir> [-n NPROCS] [-r ROUNDS] [-s SCALE] [-H HISTORY]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=16 REPS=5 SCALE=1 HIST=300
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    -s) SCALE=${2:?}; shift 2 ;;
    -H) HIST=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2
for f in "$BUILD/lib/libpmix.so.2" "$BUILD/bin/pmixrun" "$OPMIX/include/pmix.h" "$OPMIX/lib/libpmix.so.2"; do
  [ -e "$f" ] || { echo "$0: missing $f" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun not found (apt install openmpi-bin)" >&2; exit 1; }

W=$(mktemp -d /tmp/pmix_table.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -Wall -Wextra -I"$OPMIX/include" "$HERE/fence_data_bench.c" -o "$W/fdb" \
    -L"$OPMIX/lib" -lpmix
mkdir "$W/openpmix"
cp -L "$OPMIX/lib/libpmix.so.2" "$W/openpmix/libpmix.so.2"
UNSET="-u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"

run() {  # run <variant> <round>
  local out="$W/$1.$2" rc=0
  case $1 in
    openpmix|ours)
      local dir=$W/openpmix
      [ "$1" = ours ] && dir=$BUILD/lib
      (cd "$W" && env $UNSET LD_LIBRARY_PATH="$dir" timeout 900 mpirun --allow-run-as-root \
          --oversubscribe --mca pmix ext3x -x LD_LIBRARY_PATH -np "$NP" ./fdb "$SCALE" "$HIST") \
          > "$out" 2>&1 || rc=$?
      ;;
    pmixrun)
      env $UNSET LD_LIBRARY_PATH="$BUILD/lib" timeout 900 "$BUILD/bin/pmixrun" -n "$NP" \
          --timeout 850 "$W/fdb" "$SCALE" "$HIST" > "$out" 2>&1 || rc=$?
      ;;
  esac
  if [ "$rc" != 0 ] || ! grep -q '^RESULT fence_64k' "$out"; then
    echo "$0: $1 round $2 failed (exit $rc):" >&2
    tail -20 "$out" >&2
    exit 1
  fi
  echo "--- $1 round $2 ($(cut -d' ' -f1-3 /proc/loadavg))"
  grep -E '^(RESULT|fence_data_bench)' "$out"
}

echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command: $0 $BUILD -n $NP -r $REPS -s $SCALE -H $HIST"
for ((i = 1; i <= REPS; ++i)); do
  run openpmix "$i"
  run ours "$i"
  run pmixrun "$i"
done
echo "load after:  $(cat /proc/loadavg)"
echo

python3 - "$W" "$REPS" "$NP" << 'EOF'
import statistics, sys
w, reps, np = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def figures(variant):
    runs = []
    for i in range(1, reps + 1):
        vals, fin = {}, []
        for line in open(f"{w}/{variant}.{i}"):
            p = line.split()
            if len(p) == 3 and p[0] == "RESULT":
                vals[p[1]] = int(p[2])
            elif len(p) == 2 and p[0] == "FINALIZE":
                fin.append(int(p[1]))
        if fin:
            vals["finalize"] = statistics.median(fin)
        runs.append(vals)
    return runs

data = {v: figures(v) for v in ("openpmix", "ours", "pmixrun")}

def med(v, key):
    vals = [r[key] for r in data[v] if key in r]
    return statistics.median(vals) if vals else None

def fmt(ns):
    if ns is None: return "-"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.0f} us"

rows = [  # key, label, target
    ("fence_8b", "Put 1 x 8 B, Commit, collecting Fence", "<= 150 us"),
    ("fence_10x1k", "Put 10 x 1 KiB, Commit, collecting Fence", "<= 300 us"),
    ("fence_64k", "Put 1 x 64 KiB, Commit, collecting Fence", "<= 1 ms"),
    ("init", "PMIx_Init (median over ranks)", "<= 0.5x"),
    ("finalize", "PMIx_Finalize (median over ranks)", "<= 0.5x"),
    ("fence_nodata", "PMIx_Fence without data", ""),
    ("history_first", "new key every round: first tenth", ""),
    ("history_last", "new key every round: last tenth", "flat"),
]
print(f"{np} processes, median of {reps} alternating rounds")
hdr = f"{'figure':42} {'OpenPMIx':>10} {'ours':>10} {'ours/theirs':>11} {'ours pmixrun':>13}  target"
print(hdr)
print("-" * len(hdr))
for key, label, target in rows:
    t, o, p = med("openpmix", key), med("ours", key), med("pmixrun", key)
    ratio = f"{o / t:.2f}" if o and t else "-"
    print(f"{label:42} {fmt(t):>10} {fmt(o):>10} {ratio:>11} {fmt(p):>13}  {target}")
EOF
