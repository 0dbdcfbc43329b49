#!/bin/bash
# dropin.open_mpi_acceptance: ../shared/abi/mpi_tests/run_acceptance.sh against
# our libpmix.so.2 (Debian's Open MPI 4.1 mpirun, orted and MPI programs on
# our library) must print "11 passed, 0 failed".
#
# usage: acceptance.sh <run_acceptance.sh> <directory of our libpmix.so.2>
#
# The fake two-node checks start two orteds on one host, sharing one session
# directory; ORTE itself races there (an orted's mkdir meeting the other's
# cleanup), and the same failures show with a copy of Debian's own OpenPMIx
# library. Only an attempt whose every failure is such a daemon start-up
# failure is run again, at most five attempts in all; any other failure fails
# at once.
set -u
SCRIPT=${1:?run_acceptance.sh}
LIBDIR=${2:?libdir}
[ -f "$SCRIPT" ] || { echo "acceptance.sh: $SCRIPT not found: ../shared must sit beside the clone"; exit 1; }
command -v mpirun > /dev/null && command -v mpicc > /dev/null ||
  { echo "acceptance.sh: mpirun/mpicc not found (scripts/install-deps.sh installs openmpi-bin, libopenmpi-dev)"; exit 1; }

# The fake remote orted crashed now and then (SIGSEGV, ~1 run in 30 here, more
# often on CI) in ORTE's rtc/hwloc component: as a daemon it writes the node's
# topology into a shared-memory file mapped at a "hole" of its address space
# (hwloc_shmem_topology_write), and the hole it picks can meet its own stack.
# No PMIx call is on that path. With no hole asked for, ORTE shares the
# topology the ordinary way and the crash is gone; the orteds that fakessh
# starts inherit this environment.
export OMPI_MCA_rtc_hwloc_vmhole=none

before=$(ls -d /tmp/pmix_accept.* 2> /dev/null)
cleanup() {
  for d in $(ls -d /tmp/pmix_accept.* 2> /dev/null); do
    grep -qxF "$d" <<< "$before" || rm -rf "$d"
  done
}
trap cleanup EXIT

# Daemon start-up failures of ORTE's own making (see above).
ORTE_STARTUP='ORTE was unable to reliably start one or more daemons|orte_session_dir failed|hwloc_shmem_topology_write'

for attempt in 1 2 3 4 5; do
  out=$(bash "$SCRIPT" "$LIBDIR" 2>&1)
  rc=$?
  echo "=== attempt $attempt"
  echo "$out"
  last=$(tail -1 <<< "$out")
  if [ $rc = 0 ] && [ "$last" = "11 passed, 0 failed" ]; then exit 0; fi
  # Each failed check is judged on its whole output, which the script leaves
  # in its work directory (this attempt's: the newest); the 20 lines it prints
  # can miss the line that names the daemon failure.
  failed=$(sed -n 's/^FAIL \([A-Za-z0-9_]*\).*/\1/p' <<< "$out")
  [ -n "$failed" ] || { echo "acceptance.sh: the run failed without a FAIL line (rc=$rc)"; exit 1; }
  work=$(ls -dt /tmp/pmix_accept.* 2> /dev/null | head -1)
  for name in $failed; do
    if [ -z "$work" ] || [ ! -f "$work/$name.out" ] || ! grep -Eq "$ORTE_STARTUP" "$work/$name.out"; then
      echo "acceptance.sh: $name failed for a reason other than an ORTE daemon start-up race"
      exit 1
    fi
    echo "acceptance.sh: $name: $(grep -Em1 "$ORTE_STARTUP" "$work/$name.out")"
  done
  echo "acceptance.sh: every failure of attempt $attempt was an ORTE daemon start-up race; again"
done
echo "acceptance.sh: ORTE daemon start-up failed in five attempts"
exit 1
