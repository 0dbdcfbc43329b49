#!/usr/bin/env bash
# Installs every Debian package that building and testing pmixpp needs.
# Usage: sudo scripts/install-deps.sh   (root: apt-get works as it is)
# The tests need nothing else, nothing beside the clone: libpmix-dev (with
# libpmix2) is the OpenPMIx 4.2.2 the conformance tests build their probes
# against (tests/conformance/README.md), python3-pmix and openmpi-bin +
# libopenmpi-dev (mpirun, orted, mpicc) are the real consumers the drop-in
# tests run on our library (docs/dropin.md). rsyslog and python3-aiosmtpd: the
# logging tests run a private rsyslogd and SMTP server (tests/logging);
# libcurl4-openssl-dev: the email log channel (components/plog_email, optional).
# file (with dpkg-dev, from build-essential): cpack -G DEB and tests/packages.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake ccache pkg-config git python3 \
    libboost-dev libevent-dev libhwloc-dev zlib1g-dev libspdlog-dev libfmt-dev \
    libgtest-dev libgmock-dev \
    libpmix-dev python3-pmix \
    openmpi-bin libopenmpi-dev \
    rsyslog python3-aiosmtpd libcurl4-openssl-dev \
    file
# slurm (issue 20): dropin.slurm_srun_pmix runs a private one-node Slurm whose mpi/pmix_v4 plugin (slurmstepd) hosts our server.
$SUDO apt-get install -y -qq --no-install-recommends slurmd slurmctld slurm-client munge slurm-wlm-basic-plugins
# faults (issue 19): clang and its libFuzzer runtime build the fuzz targets scripts/test.sh runs (tests/fuzz).
$SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev
