#!/bin/bash
# dropin.open_mpi_acceptance: Debian's Open MPI 4.1 (mpirun, orted and MPI
# programs, through its ext3x PMIx component) runs on our libpmix.so.2.
#
# usage: acceptance.sh <directory of our libpmix.so.2>
#
# The MPI programs are in mpi/ (built here with Debian's mpicc). Eleven checks,
# each named in the output as PASS or FAIL, then "N passed, N failed":
#   hello_np4          mpirun -np 4 which_pmix: every rank's allreduce adds up
#   loaded_from_libdir ... and each of the 4 ranks and its launcher mapped
#                      <libdir>/libpmix.so.2
#   singleton          which_pmix without mpirun, mapping our library
#   spawn              MPI_Comm_spawn of 2 children, merged allreduce
#   connect_accept     publish/lookup of a port, accept/connect of two halves
#   abort_rc7          MPI_Abort(7) on rank 1: mpirun exits with 7
#   mn_*               fake two-node runs (two orteds on this host, started
#                      through fake_rsh.sh): hello with collected data, with
#                      direct modex, with async modex, spawn and connect across
#                      daemons; every rank and orted maps our library
#
# The fake two-node checks start two orteds on one host, sharing one session
# directory; ORTE itself races there (an orted's mkdir meeting the other's
# cleanup), and the same failures show with a copy of Debian's own OpenPMIx
# library. A check whose failure is such a daemon start-up failure is run
# again, in five rounds at most; any other failure fails the test at once.
set -u
LIBDIR=$(cd "${1:?usage: acceptance.sh <directory of our libpmix.so.2>}" && pwd) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
[ -e "$LIBDIR/libpmix.so.2" ] || { echo "acceptance.sh: no libpmix.so.2 in $LIBDIR"; exit 1; }
command -v mpirun > /dev/null && command -v mpicc > /dev/null ||
  { echo "acceptance.sh: mpirun/mpicc not found (scripts/install-deps.sh installs openmpi-bin, libopenmpi-dev)"; exit 1; }

# The fake remote orted crashed now and then (SIGSEGV, ~1 run in 30 here, more
# often on CI) in ORTE's rtc/hwloc component: as a daemon it writes the node's
# topology into a shared-memory file mapped at a "hole" of its address space
# (hwloc_shmem_topology_write), and the hole it picks can meet its own stack.
# No PMIx call is on that path. With no hole asked for, ORTE shares the
# topology the ordinary way and the crash is gone; the orteds that fake_rsh.sh
# starts inherit this environment.
export OMPI_MCA_rtc_hwloc_vmhole=none

WORK=$(mktemp -d /tmp/pmixpp_dropin.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
for prog in which_pmix spawn_pair port_rendezvous abort_seven; do
  mpicc -O1 -Wall -Werror "$HERE/mpi/$prog.c" -o "$prog" ||
    { echo "acceptance.sh: cannot build mpi/$prog.c"; exit 1; }
done
cp "$HERE/mpi/fake_rsh.sh" fake_rsh && chmod +x fake_rsh

export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OURS="$LIBDIR/libpmix.so.2"
MPIRUN=(timeout 120 mpirun --allow-run-as-root --oversubscribe --mca pmix ext3x)
TWO_NODES=(--mca btl self,tcp --mca plm_rsh_agent "$WORK/fake_rsh" --host n1:2,n2:2)

# Each check runs one command into <name>.out and says why it failed, if it did.
expect_rc() { # expected-rc command...: the command's exit status
  local want=$1; shift
  "$@"; local rc=$?
  [ "$rc" = "$want" ] || { echo "exit status $rc, want $want" >&3; return 1; }
}
ranks_map_ours() { # count output launcher(yes|no): count distinct ranks mapped ours
  local count=$1 out=$2 launcher=$3 pattern n
  pattern="^rank [0-9]+ of $count: self $OURS launcher "
  [ "$launcher" = yes ] && pattern="$pattern$OURS\$"
  n=$(grep -E "$pattern" "$out" | cut -d' ' -f2 | sort -u | wc -l)
  [ "$n" = "$count" ] || { echo "$n of $count ranks mapped $OURS$([ "$launcher" = yes ] && echo ' (self and launcher)')" >&3; return 1; }
}
mpi_hello() { # mpirun options...: 4 ranks, all of them and their launchers on our library
  expect_rc 0 "${MPIRUN[@]}" "$@" -np 4 ./which_pmix > "$NAME.run" 2>&1 || { cat "$NAME.run"; return 1; }
  cat "$NAME.run"
  ranks_map_ours 4 "$NAME.run" yes
}
check_hello_np4() { expect_rc 0 "${MPIRUN[@]}" -np 4 ./which_pmix; }
check_loaded_from_libdir() { ranks_map_ours 4 hello_np4.out yes; }
check_singleton() {
  expect_rc 0 timeout 60 ./which_pmix > singleton.run 2>&1 || { cat singleton.run; return 1; }
  cat singleton.run
  ranks_map_ours 1 singleton.run no
}
two_halves() { # output: 2 parents and 2 children, or 4 ranks joined
  local out=$1
  case $NAME in
    *spawn) [ "$(grep -Ec '^(parent|child) [01] of 2: merged [0-3] of 4, sum 6$' "$out")" = 4 ] ;;
    *) [ "$(grep -Ec '^rank [0-3] \((lower|upper) half\): remote group 2, sum 6$' "$out")" = 4 ] ;;
  esac || { echo "not every process reported the joined group" >&3; return 1; }
}
check_spawn() { expect_rc 0 "${MPIRUN[@]}" -np 2 ./spawn_pair > spawn.run 2>&1; local ok=$?; cat spawn.run; [ $ok = 0 ] && two_halves spawn.run; }
check_connect_accept() { expect_rc 0 "${MPIRUN[@]}" -np 4 ./port_rendezvous > connect.run 2>&1; local ok=$?; cat connect.run; [ $ok = 0 ] && two_halves connect.run; }
check_abort_rc7() { expect_rc 7 "${MPIRUN[@]}" -np 2 ./abort_seven; }
check_mn_hello() { mpi_hello "${TWO_NODES[@]}"; }
check_mn_hello_dmodex() { mpi_hello "${TWO_NODES[@]}" --mca pmix_base_collect_data 0; }
check_mn_async_modex() { mpi_hello "${TWO_NODES[@]}" --mca pmix_base_async_modex 1 --mca pmix_base_collect_data 0; }
check_mn_spawn() { expect_rc 0 "${MPIRUN[@]}" "${TWO_NODES[@]}" -np 2 ./spawn_pair > mn_spawn.run 2>&1; local ok=$?; cat mn_spawn.run; [ $ok = 0 ] && two_halves mn_spawn.run; }
check_mn_connect() { expect_rc 0 "${MPIRUN[@]}" "${TWO_NODES[@]}" -np 4 ./port_rendezvous > mn_connect.run 2>&1; local ok=$?; cat mn_connect.run; [ $ok = 0 ] && two_halves mn_connect.run; }

CHECKS="hello_np4 loaded_from_libdir singleton spawn connect_accept abort_rc7
        mn_hello mn_hello_dmodex mn_async_modex mn_spawn mn_connect"
# Daemon start-up failures of ORTE's own making (see above).
# "A call to mkdir was unable to create the desired directory ... File exists":
# the two orteds of the fake nodes share /tmp/ompi.<host>.<uid> and race to make
# the same job directory (on a loaded machine: 3 in 30 runs on our library, 5 in
# 30 on Debian's OpenPMIx).
ORTE_STARTUP='ORTE was unable to reliably start one or more daemons|orte_session_dir failed|hwloc_shmem_topology_write|A call to mkdir was unable to create the desired directory'

passed=0
todo=$CHECKS
for round in 1 2 3 4 5; do
  again="" failed=""
  for NAME in $todo; do
    "check_$NAME" > "$NAME.out" 2>&1 3> "$NAME.why"
    if [ $? = 0 ]; then
      echo "PASS $NAME"
      passed=$((passed + 1))
      continue
    fi
    echo "FAIL $NAME: $(tr '\n' ' ' < "$NAME.why")"
    tail -20 "$NAME.out" | sed 's/^/    /'
    if grep -Eq "$ORTE_STARTUP" "$NAME.out"; then
      echo "acceptance.sh: $NAME: $(grep -Em1 "$ORTE_STARTUP" "$NAME.out"): ORTE's own start-up race"
      again="$again $NAME"
    else
      failed="$failed $NAME"
    fi
  done
  if [ -n "$failed" ]; then
    echo "acceptance.sh:$failed failed for a reason other than an ORTE daemon start-up race"
    echo "$passed passed, $(wc -w <<< "$failed $again") failed"
    exit 1
  fi
  [ -z "$again" ] && { echo "$passed passed, 0 failed"; exit 0; }
  todo=$again
  echo "=== round $((round + 1)), again:$todo"
done
echo "$passed passed, $(wc -w <<< "$todo") failed (ORTE daemon start-up failed in five rounds)"
exit 1
