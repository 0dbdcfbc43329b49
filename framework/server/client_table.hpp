// ClientTable: the jobs and clients the host registered (and the tools that
// connected), and the one departure path: every way a client ends
// (PMIx_Finalize, a lost connection, PMIx_server_deregister_client or
// _deregister_nspace, a tool's finalize or loss) goes through depart(), which
// marks the record and tells every DepartureListener exactly once per
// connection life (README.md, "Departures").
//
// Threads: progress thread only. No sockets: a record's channel is only
// held here, never used (unit-tested without a loop: tests/unit/server).
#pragma once

#include <pmix_common.h>

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pmixpp/mca/info.hpp"
#include "wire/channel.hpp"
#include "wire/shm_fence.hpp"

namespace pmixpp::server {

using ProcKey = std::pair<std::string, pmix_rank_t>;
ProcKey key_of(const pmix_proc_t &proc);
pmix_proc_t proc_of(const ProcKey &key);
// "nspace:rank" ("nspace:*" for the wildcard), for logs and signatures.
std::string describe(const ProcKey &key);
// The first entry of `info` with `key`, or nullptr (pmixpp/mca/info.hpp).
using mca::find_info;

// How a client left. finalized: it called PMIx_Finalize (or a tool finalized);
// lost: its connection ended without that; deregistered: the host
// deregistered it or its namespace.
enum class Departure : std::uint8_t { finalized, lost, deregistered };
const char *to_string(Departure why);

// One outstanding reply owed to a client (send_reply(), requests.hpp).
struct PendingReply {
    std::weak_ptr<wire::Channel> channel;
    wire::Frame request;  // command + tag (body emptied)
    // Set: the reply body goes here instead (the services' unit tests).
    std::function<void(std::span<const std::uint8_t>)> sink;

    // Where the answer to `request`, received on `ch`, goes.
    static PendingReply to(wire::Channel &ch, const wire::Frame &request) {
        return {ch.weak_from_this(), wire::Frame{request.command, request.tag, request.flags, {}},
                nullptr};
    }
    static PendingReply to(std::function<void(std::span<const std::uint8_t>)> sink) {
        return {{}, wire::Frame{}, std::move(sink)};
    }
};

struct ClientRecord {
    pmix_proc_t proc{};
    uid_t uid = 0;
    gid_t gid = 0;
    void *server_object = nullptr;
    std::uint32_t pid = 0;  // from the handshake
    enum class State { registered, connecting, connected, finalized, lost };
    State state = State::registered;
    // Set by ClientTable::depart (once), cleared by a new handshake.
    bool departed = false;
    std::shared_ptr<wire::Channel> channel;
    bool committed = false;
    // Commit frames handled (compared with the job's fence segment: wire/shm_fence.hpp).
    std::uint64_t commits_received = 0;
    std::vector<std::uint8_t> local_blob;   // its committed LOCAL data (commit blobs, concatenated)
    std::vector<std::uint8_t> remote_blob;  // ... (REMOTE)
    // What changed, for collecting fences (Modex::record_commit, README "Fence"):
    std::uint64_t commit_seq = 0;  // commits recorded, never reset
    // The LOCAL blobs of the latest commits (seq, blob), contiguous up to
    // commit_seq, kept while they add up to less than local_blob.
    std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> local_deltas;
    std::size_t local_deltas_bytes = 0;
    std::size_t compacted_bytes = 0;  // local_blob + remote_blob when last rebuilt
    // As a fence receiver: the commit_seq of each local peer whose data it holds.
    std::map<ProcKey, std::uint64_t> seen;
    // The commit_seq up to which the server last wrote its fence area for it
    // (Collectives::publish_for): the next one writes only what came after.
    std::uint64_t area_to = 0;

    // Connected or on its way: not departed.
    bool running() const { return state == State::connected || state == State::connecting; }
    bool gone() const { return state == State::finalized || state == State::lost; }
};

struct JobRecord {
    std::string nspace;
    std::string secret;  // per-job handshake secret (setup_fork)
    bool registered = false;
    std::uint32_t job_size = 0;
    int nlocalprocs = 0;
    std::map<pmix_rank_t, ClientRecord> clients;
    // The shared-memory fence of a job that runs entirely on this node
    // (wire/shm_fence.hpp), and the socket fences the server joined it for.
    std::shared_ptr<wire::ShmFence> fence_shm;
    bool fence_shm_given = false;  // chowned to the job's user (root server)
    // Its collecting fences' data, written once for every client that maps
    // it (wire/shm_fence.hpp, ShmData); created and given away with fence_shm.
    std::shared_ptr<wire::ShmData> fence_data;
    // Its ranks' fence areas (wire/shm_fence.hpp, ShmArea): collecting
    // fences through the barrier. Empty: they go through the server.
    std::vector<std::unique_ptr<wire::ShmArea>> fence_areas;
    struct ShmWaiter {
        std::uint32_t gen = 0;
        ProcKey proc;
        PendingReply reply;
        std::uint64_t timer = 0;
        bool collect = false;  // answered with the generation's areas
    };
    std::vector<ShmWaiter> shm_waiters;
    // A client's next socket fence while its previous one still waits in
    // the barrier (PMIx_Fence_nb twice): joined once that one is answered,
    // so that one process never arrives twice in one generation.
    struct ShmDeferred {
        ProcKey proc;
        bool collect = false;
        std::uint32_t timeout = 0;
        PendingReply reply;
    };
    std::vector<ShmDeferred> shm_deferred;
};

// What a service holding state about clients implements to hear of their
// departures. Listeners are called in subscription order.
class DepartureListener {
  public:
    virtual ~DepartureListener() = default;
    // `client` departed. Its record is still in the table, marked (state
    // finalized or lost, departed); a listener may remove it (tools).
    virtual void client_departed(const ProcKey &client, Departure why) = 0;
    // The host deregistered `nspace`: after each of its clients departed,
    // before the job's record goes.
    virtual void job_deregistered(const std::string & /*nspace*/) {}
};

class ClientTable {
  public:
    // The job's record, created (with a fresh secret) if new.
    JobRecord &job(const std::string &nspace);
    JobRecord *find_job(const std::string &nspace);
    const JobRecord *find_job(const std::string &nspace) const;
    ClientRecord *find_client(const ProcKey &key);
    std::map<std::string, JobRecord> &jobs() { return jobs_; }
    const std::map<std::string, JobRecord> &jobs() const { return jobs_; }

    // PMIx_server_register_client: the record (kept if it exists).
    ClientRecord &register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                  void *server_object);

    void subscribe(DepartureListener *listener) { listeners_.push_back(listener); }
    void unsubscribe(DepartureListener *listener);

    // The one departure path. False (nobody told) when `key` has no record or
    // already departed in this connection life.
    bool depart(const ProcKey &key, Departure why);
    // PMIx_server_deregister_client: departs (deregistered), then the record goes.
    void deregister_client(const ProcKey &key);
    // PMIx_server_deregister_nspace: each client departs (deregistered),
    // the listeners hear job_deregistered, then the job's record goes.
    void deregister_nspace(const std::string &nspace);
    // Removes a record without a departure notice (a tool's, once it departed).
    void erase_client(const ProcKey &key);
    void erase_job(const std::string &nspace) { jobs_.erase(nspace); }
    // Server stop: every record goes, nobody is told.
    void clear() { jobs_.clear(); }

  private:
    std::map<std::string, JobRecord> jobs_;
    std::vector<DepartureListener *> listeners_;
};

}  // namespace pmixpp::server
