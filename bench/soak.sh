#!/bin/bash
# Soak (issue 19 item 5) and new-key rounds (item 7) with soak_bench.c under
# our pmixrun, which is the server: its memory is the server's.
# usage: bench/soak.sh <our build dir> soak    [-n NPROCS] [-t SECONDS]
#        bench/soak.sh <our build dir> newkeys [-n NPROCS] [-r ROUNDS]
# soak: `soak_bench mixed SECONDSs`; pmixrun's VmRSS is sampled every second
# and printed at the end of each minute, then the first-to-last-minute ratio
# (a leak check: within 10 %). newkeys: the median round time of each tenth
# of the rounds (a flat per-round cost: the tenths are alike).
# Prints figures only; nothing here asserts on time.
set -euo pipefail
usage() { echo "usage: $0 <our build dir> soak|newkeys [-n NPROCS] [-t SECONDS] [-r ROUNDS]" >&2; exit 2; }
[ $# -ge 2 ] || usage
BUILD=$(cd "$1" && pwd) || usage
MODE=$2
shift 2
NP=128 SECS=600 ROUNDS=1000
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -t) SECS=${2:?}; shift 2 ;;
    -r) ROUNDS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
W=$(mktemp -d /tmp/soak_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -Wall -Wextra -I"$SRC/include" "$HERE/soak_bench.c" -o "$W/soak_bench" \
    -L"$BUILD/lib" -lpmix -Wl,-rpath,"$BUILD/lib"
UNSET="-u LD_LIBRARY_PATH -u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
if [ "$MODE" = newkeys ]; then
  start=$(date +%s.%N)
  env $UNSET "$BUILD/bin/pmixrun" -n "$NP" --timeout 3000 "$W/soak_bench" newkeys "$ROUNDS" | tee "$W/out"
  end=$(date +%s.%N)
  echo "load after: $(cat /proc/loadavg)   wall: $(echo "$end - $start" | bc) s"
  awk '/^TENTH/ { t[$2] = $3; s[$2] = $4; c[$2] = $5 } END { if (0 in t && 9 in t) {
       printf "round (median wall): first tenth %.3f ms, last tenth %.3f ms, last/first %.2f\n", t[0] / 1e6, t[9] / 1e6, t[9] / t[0]
       printf "server CPU per round: first tenth %d us, last tenth %d us\n", s[0], s[9]
       printf "rank 0 CPU per round: first tenth %d us, last tenth %d us\n", c[0], c[9] } }' "$W/out"
  exit 0
fi
[ "$MODE" = soak ] || usage
# 30 s more than asked, so that the last full minute is sampled too
env $UNSET "$BUILD/bin/pmixrun" -n "$NP" --timeout $((SECS + 600)) "$W/soak_bench" mixed "$((SECS + 30))s" \
    >"$W/out" 2>"$W/err" &
pid=$!
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0; }
# Minutes by the clock, not by counting `sleep 1`s: on a loaded machine each
# turn of this loop takes more than a second, and the count fell short of the
# 10th minute before the run ended.
start=$(date +%s) minute=1 first=0 last=0
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  if [ $(($(date +%s) - start)) -ge $((minute * 60)) ]; then
    kb=$(rss)
    [ "$kb" -gt 0 ] || break
    [ "$first" -gt 0 ] || first=$kb
    last=$kb
    echo "minute $minute: pmixrun VmRSS ${kb} kB   load $(cut -d' ' -f1-3 /proc/loadavg)"
    minute=$((minute + 1))
  fi
done
status=0
wait "$pid" || status=$?
cat "$W/out"
[ "$status" -eq 0 ] || { echo "pmixrun exited $status"; tail -20 "$W/err"; exit 1; }
if [ "$first" -gt 0 ]; then
  echo "VmRSS first minute ${first} kB, last minute ${last} kB: last/first $(echo "scale=3; $last / $first" | bc)"
fi
echo "load after: $(cat /proc/loadavg)"
