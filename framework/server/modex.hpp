// Modex: the clients' committed data on the server side. Owns the blobs the
// host gave us for remote processes (host fences, direct modex), the get /
// dmodex waiters on a local client's next commit, and the
// PMIx_server_dmodex_request calls for jobs not registered yet; handles the
// commit and get requests. A departed client's waiters are answered
// (NOT_FOUND unless it committed before). Progress thread only.
//
// A commit is kept as the blobs it came with, not decoded: what the server
// forwards (Get, fences, dmodex, connect, groups) is those blobs. Their
// values reach the datastore only when something reads them there (the
// server process's own PMIx_Get, through pending()).
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gds/gds_base.hpp"
#include "gds/lazy_modex.hpp"
#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

// The blobs of processes served elsewhere, as the collectives see them.
class RemoteBlobs {
  public:
    virtual ~RemoteBlobs() = default;
    virtual void keep_remote(const ProcKey &proc, std::vector<std::uint8_t> blob) = 0;
    // Those of `proc` (a wildcard: of its whole nspace) go: asked again next time.
    virtual void forget_remote(const ProcKey &proc) = 0;
    virtual const std::map<ProcKey, std::vector<std::uint8_t>> &remote_blobs() const = 0;
};

class Modex final : public DepartureListener, public RemoteBlobs {
  public:
    // `job_blob`: the job-level blob of a registered nspace (empty: none).
    using JobBlobFn = std::function<std::vector<std::uint8_t>(const std::string &nspace)>;
    Modex(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
          JobBlobFn job_blob);
    // The datastore commits go to (set at start, reset at stop).
    void set_store(std::shared_ptr<gds_base::Datastore> store) { store_ = std::move(store); }

    // A commit of `c`: its blobs are kept (and handed to pending(), not
    // decoded), its waiters run. `global` (may be empty): its GLOBAL values,
    // sent once, when `local` and `remote` hold only those put with exactly
    // that scope; each part is kept as its blob followed by `global`.
    // `whole`: the blobs are everything it committed, not its latest
    // changes: they replace what is kept. `legacy`: a client that never
    // sends `whole` (a commit body of two parts): the server rebuilds its
    // blobs from the datastore once re-Put values have doubled them.
    // `count`: the commits this one stands for (a client that held back
    // earlier `whole` ones, wire/commit_flags.hpp).
    void commit(ClientRecord &c, std::vector<std::uint8_t> local, std::vector<std::uint8_t> remote,
                std::vector<std::uint8_t> global, bool whole, bool legacy, std::uint32_t count = 1);
    // The part of commit() that keeps the blobs and runs the waiters.
    void record_commit(ClientRecord &c, std::vector<std::uint8_t> local,
                       std::vector<std::uint8_t> remote, bool whole = false,
                       std::uint32_t count = 1);
    // The clients' committed blobs not decoded yet: a reader of their values
    // in the datastore materializes the process it reads first
    // (client/client.cpp: the server process's PMIx_Get).
    const std::shared_ptr<gds_base::LazyModex> &pending() const { return pending_; }
    // Appends to `stream` the record of local client `c`'s data that a
    // receiver holding its commits up to `seen` lacks: the later commits'
    // blobs while they are smaller than half the whole, else the whole (a
    // `whole` record, wire/message.hpp); nothing
    // when it holds them all.
    static void append_changes(std::vector<std::uint8_t> &stream, const ClientRecord &c,
                               std::uint64_t seen);
    // Answers `reply` with the LOCAL blob of local client `target`; when it
    // has not committed and `wait`, at its next commit or departure
    // (PMIX_ERR_TIMEOUT after `timeout_s` > 0).
    void reply_get_local(const PendingReply &reply, const ProcKey &target, bool wait,
                         std::uint32_t timeout_s);
    // PMIx_server_dmodex_request: the REMOTE blob of a local client, waiting
    // for its commit; for a job not registered yet, once it is (job_registered).
    void dmodex_request(const pmix_proc_t &proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata);
    void job_registered(const std::string &nspace);

    void keep_remote(const ProcKey &proc, std::vector<std::uint8_t> blob) override;
    void forget_remote(const ProcKey &proc) override;
    const std::map<ProcKey, std::vector<std::uint8_t>> &remote_blobs() const override {
        return remote_blobs_;
    }

    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;
    // Server stop: deferred dmodex requests answered NOT_FOUND, the rest forgotten.
    void clear();
    // Waiters on `client`'s next commit (tests).
    std::size_t waiting_on(const ProcKey &client) const;

  private:
    void handle_commit(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_get(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    // Whether a commit of `c` counted in its job's segment has not arrived yet.
    bool commit_in_flight(const ClientRecord &c);
    // Something here waits for c's commits: c stops holding them back (its
    // fence area's flag) and sends those it holds (Command::commit_flush).
    void ask_for_commits(ClientRecord &c);
    void run_waiters(const ProcKey &client);
    // Rebuilds c's blobs from the datastore once re-Put values have doubled
    // them (`legacy` clients only: the others send `whole` commits); drops
    // deltas that add up to more than the whole.
    void compact(ClientRecord &c, bool legacy);

    ClientTable &clients_;
    const HostUpcalls &host_;
    JobBlobFn job_blob_;
    std::shared_ptr<gds_base::Datastore> store_;
    std::shared_ptr<gds_base::LazyModex> pending_ = std::make_shared<gds_base::LazyModex>("server");
    std::map<ProcKey, std::vector<std::uint8_t>> remote_blobs_;  // from host fences / dmodex
    // Run (progress thread) at the client's next commit or departure.
    std::map<ProcKey, std::vector<std::function<void()>>> waiters_;
    // PMIx_server_dmodex_request for a job our host has not registered yet, by
    // nspace: answered when it does (register_nspace), or NOT_FOUND at stop().
    struct DeferredDmodex {
        pmix_proc_t proc;
        pmix_dmodex_response_fn_t cbfunc;
        void *cbdata;
    };
    std::map<std::string, std::vector<DeferredDmodex>> deferred_;
};

}  // namespace pmixpp::server
