#!/bin/bash
# PMIx_Init and PMIx_Finalize, both libraries under the same host (issue 17
# items 1 and 3): startup_bench.c built ONCE (against Debian's OpenPMIx 4.2.2
# headers; our library is ABI-compatible) and run in alternating rounds
#   openpmix: Debian mpirun, LD_LIBRARY_PATH = a copy of Debian's libpmix.so.2
#   ours:     the same mpirun, LD_LIBRARY_PATH = <our build dir>/lib (mpirun's
#             own PMIx server is then ours too)
#   pmixrun:  our pmixrun
# so that the machine's load hits all three alike.
#
# usage: bench/run_startup.sh <our build dir> [-n NPROCS] [-r ROUNDS]
# Prints each run's RESULT lines, the load before/after, and the table: the
# median over the rounds of each figure (each one a median over the ranks).
# Nothing asserts on time.
set -euo pipefail

usage() { echo "usage: $0 <our build dir> [-n NPROCS] [-r ROUNDS]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=16 REPS=9
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2
for f in "$BUILD/lib/libpmix.so.2" "$BUILD/bin/pmixrun" "$OPMIX/include/pmix.h" "$OPMIX/lib/libpmix.so.2"; do
  [ -e "$f" ] || { echo "$0: missing $f" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun not found (apt install openmpi-bin)" >&2; exit 1; }

W=$(mktemp -d /tmp/pmix_startup.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -Wall -Wextra -I"$OPMIX/include" "$HERE/startup_bench.c" -o "$W/sb" \
    -L"$OPMIX/lib" -lpmix
mkdir "$W/openpmix"
cp -L "$OPMIX/lib/libpmix.so.2" "$W/openpmix/libpmix.so.2"
UNSET="-u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
# 128 processes need more descriptors than a default soft limit of 1024 in
# mpirun (3 pipes + a socket per rank) and in pmixrun.
ulimit -n "$(ulimit -Hn)" 2> /dev/null || true

run() {  # run <variant> <round>
  local out="$W/$1.$2" rc=0
  case $1 in
    openpmix|ours)
      local dir=$W/openpmix
      [ "$1" = ours ] && dir=$BUILD/lib
      (cd "$W" && env $UNSET LD_LIBRARY_PATH="$dir" timeout 600 mpirun --allow-run-as-root \
          --oversubscribe --mca pmix ext3x -x LD_LIBRARY_PATH -np "$NP" ./sb) \
          > "$out" 2>&1 || rc=$?
      ;;
    pmixrun)
      env $UNSET LD_LIBRARY_PATH="$BUILD/lib" timeout 600 "$BUILD/bin/pmixrun" -n "$NP" \
          --timeout 550 "$W/sb" > "$out" 2>&1 || rc=$?
      ;;
  esac
  if [ "$rc" != 0 ] || [ "$(grep -c '^FINALIZE' "$out")" != "$NP" ]; then
    echo "$0: $1 round $2 failed (exit $rc):" >&2
    tail -20 "$out" >&2
    exit 1
  fi
  echo "--- $1 round $2 ($(cut -d' ' -f1-3 /proc/loadavg))"
  grep -E '^RESULT (init|init_cpu|init_vcsw) ' "$out" | tr '\n' ' '
  echo
}

echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command: $0 $BUILD -n $NP -r $REPS"
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
        vals, fin = {}, {"finalize": [], "finalize_cpu": [], "finalize_vcsw": []}
        for line in open(f"{w}/{variant}.{i}"):
            p = line.split()
            if len(p) == 3 and p[0] == "RESULT":
                vals[p[1]] = int(p[2])
            elif len(p) == 4 and p[0] == "FINALIZE":
                for k, x in zip(("finalize", "finalize_cpu", "finalize_vcsw"), p[1:]):
                    fin[k].append(int(x))
        for k, xs in fin.items():
            if xs:
                vals[k] = statistics.median(xs)
                vals[k + "_max"] = max(xs)
        runs.append(vals)
    return runs

data = {v: figures(v) for v in ("openpmix", "ours", "pmixrun")}

def med(v, key):
    vals = [r[key] for r in data[v] if key in r]
    return statistics.median(vals) if vals else None

def fmt(x, count):
    if x is None: return "-"
    if count: return f"{x:.1f}"
    return f"{x / 1e6:.2f} ms" if x >= 1e6 else f"{x / 1e3:.0f} us"

rows = [  # key, label, is a count
    ("init", "PMIx_Init wall", False),
    ("init_max", "PMIx_Init wall, slowest rank", False),
    ("init_cpu", "PMIx_Init CPU (all threads)", False),
    ("init_vcsw", "PMIx_Init voluntary context switches", True),
    ("start_cpu", "CPU from exec to main", False),
    ("finalize", "PMIx_Finalize wall", False),
    ("finalize_max", "PMIx_Finalize wall, slowest rank", False),
    ("finalize_cpu", "PMIx_Finalize CPU (all threads)", False),
    ("finalize_vcsw", "PMIx_Finalize voluntary context switches", True),
]
print(f"{np} processes, median over the ranks, median of {reps} alternating rounds")
hdr = f"{'figure':42} {'OpenPMIx':>10} {'ours':>10} {'ours/theirs':>11} {'ours pmixrun':>13}"
print(hdr)
print("-" * len(hdr))
for key, label, count in rows:
    t, o, p = med("openpmix", key), med("ours", key), med("pmixrun", key)
    ratio = f"{o / t:.2f}" if o and t else "-"
    print(f"{label:42} {fmt(t, count):>10} {fmt(o, count):>10} {ratio:>11} {fmt(p, count):>13}")
EOF
