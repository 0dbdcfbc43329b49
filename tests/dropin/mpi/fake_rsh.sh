#!/bin/sh
# fake_rsh.sh HOST COMMAND...: ORTE's remote-shell agent (plm_rsh_agent) for
# the fake two-node checks of dropin.open_mpi_acceptance. There is one machine:
# forget HOST and run the daemon's command line here, through a shell as a
# remote login would.
[ $# -ge 2 ] || { echo "fake_rsh.sh: usage: fake_rsh.sh HOST COMMAND..." >&2; exit 255; }
shift
exec /bin/sh -c "$*"
