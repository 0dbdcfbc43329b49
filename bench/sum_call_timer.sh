#!/bin/bash
# Sums bench/pmix_call_timer.c's output over processes, one line per call:
#   <call> <count> <total ms> <max ms> <mean µs>
# usage: bench/sum_call_timer.sh <file written through PMIX_CALL_TIMER_OUT>
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <file>" >&2; exit 2; }
awk '{ c[$2] += $3; t[$2] += $4; if ($5 > m[$2]) m[$2] = $5 }
     END { for (k in c) printf "%-36s %6d %10.2f ms %8.2f ms %9.1f us\n", k, c[k], t[k] / 1000, m[k] / 1000, t[k] / c[k] }' "$1" | sort
