// Where pmixrun places its processes: `--bind-to none` (the default: each
// process runs where pmixrun runs) or `--bind-to core` (the k-th process
// started on this node gets core k modulo the number of cores). Each process is
// told its place through PMIX_CPUSET and PMIX_LOCALITY_STRING (docs/network.md).
#pragma once

#include <cstdint>
#include <string>

namespace pmixrun {

enum class BindTo { none, core };

// Set once by main, before the first launch.
void set_bind_to(BindTo policy);

// The PMIX_CPUSET and PMIX_LOCALITY_STRING of the `slot`-th process started
// on this node; false (and a message on stderr) when the topology cannot be
// loaded: then the process gets neither key.
bool placement_strings(std::uint32_t slot, std::string &cpuset, std::string &locality);

// The hwloc XML file pmixrun shares its topology through (PMIX_TOPOLOGY_FILE
// in each job's info: a client's PMIx_Load_topology loads it instead of
// discovering the machine again); written on the first call, removed when
// pmixrun exits; empty when there is no topology to share.
const std::string &shared_topology_file();

// `--tcp-ports N`: every job asks the pnet framework for a "tcp" fabric of N
// ports per process (PMIX_ALLOC_FABRIC in setup_application; 0: none).
void set_tcp_ports(std::uint32_t per_process);
std::uint32_t tcp_ports();

// Binds the calling thread to the `slot`-th process's cpus for its lifetime
// (a child started meanwhile inherits them), then restores the thread's
// binding; does nothing under --bind-to none.
class SpawnBinding {
  public:
    explicit SpawnBinding(std::uint32_t slot);
    ~SpawnBinding();
    SpawnBinding(const SpawnBinding &) = delete;
    SpawnBinding &operator=(const SpawnBinding &) = delete;

  private:
    void *saved_ = nullptr;  // hwloc_bitmap_t of the thread's binding before
};

}  // namespace pmixrun
