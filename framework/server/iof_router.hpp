// IofRouter: IO forwarding on the server side (docs/iof.md). Owns the
// clients' and tools' pulls, the output cache and its per-channel policy;
// handles iof_pull / iof_deregister / iof_push; routes the host's
// PMIx_server_IOF_deliver output. A departed client's pulls go.
// Progress thread only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

class IofRouter final : public DepartureListener {
  public:
    IofRouter(ClientTable &clients, const HostUpcalls &host, RequestTable &requests);
    // PMIx_server_IOF_deliver: to every pull matching the source and channel,
    // else into the cache.
    void deliver(const pmix_proc_t &source, pmix_iof_channel_t channel,
                 std::vector<std::uint8_t> bytes, std::shared_ptr<wire::InfoArray> info);
    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;
    void clear();

  private:
    // Each client's pulls by its registration id; output no pull wanted,
    // oldest first, with its bytes per channel; the cache limit and drop
    // policy per channel (the last pull that named the channel set it).
    struct Pull {
        std::vector<pmix_proc_t> procs;
        pmix_iof_channel_t channels = 0;
    };
    struct Chunk {
        pmix_proc_t source{};
        pmix_iof_channel_t channel = 0;
        std::vector<std::uint8_t> bytes;
        std::shared_ptr<wire::InfoArray> info;
    };
    struct CachePolicy {
        std::uint64_t size = 0;
        bool drop_oldest = false;
    };
    void handle_pull(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_deregister(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_push(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    CachePolicy policy_of(pmix_iof_channel_t channel) const;
    void trim_cache(pmix_iof_channel_t channel);
    // Cached output to a new pull, oldest first.
    void replay(const ProcKey &client, std::uint64_t id);

    ClientTable &clients_;
    const HostUpcalls &host_;
    std::map<ProcKey, std::map<std::uint64_t, Pull>> pulls_;
    std::deque<Chunk> cache_;
    std::map<pmix_iof_channel_t, std::uint64_t> cached_bytes_;
    std::map<pmix_iof_channel_t, CachePolicy> policy_;
};

}  // namespace pmixpp::server
