// Rendezvous files of ptl_tcp: how a tool finds a server without being given
// its URI. A server that offers tool support writes
//     <tmpdir>/pmixpp.<hostname>.tool.<pid>
// holding its TCP URIs, one per line; find_rendezvous() reads them back.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::ptl_tcp {

// One written rendezvous file; removes it when destroyed (the listeners of one
// listen() call share it, so it goes with the last of them).
class RendezvousFile {
  public:
    // Writes the file atomically (temporary file + rename), mode 0600.
    static mca::Result<std::shared_ptr<RendezvousFile>> write(const std::string &dir,
                                                              const std::vector<std::string> &uris);
    ~RendezvousFile();
    RendezvousFile(const RendezvousFile &) = delete;
    RendezvousFile &operator=(const RendezvousFile &) = delete;

    const std::string &path() const noexcept { return path_; }

  private:
    explicit RendezvousFile(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

// The URIs in the rendezvous files of this host under `dirs`, skipping files
// of processes that are gone; only the server `pid` when given.
std::vector<std::string> find_rendezvous(const std::vector<std::string> &dirs,
                                         std::optional<pid_t> pid);

// PMIX_SERVER_TMPDIR / PMIX_SYSTEM_TMPDIR from `info` when present, then
// $TMPDIR, then /tmp (without duplicates).
std::vector<std::string> rendezvous_dirs(std::span<const pmix_info_t> info);

}  // namespace pmixpp::ptl_tcp
