// PMIx_Fence in the job's shared-memory barrier (wire/shm_fence.hpp): a
// blocking fence over the caller's whole namespace without data, called on
// any thread but the progress thread, when the server offered a segment.
#include <cstring>

#include "client/client.hpp"
#include "mca/logging.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::client {

using runtime::ProgressEngine;
using wire::BodyWriter;
using wire::Command;

std::shared_ptr<wire::ShmFence> Client::fence_segment() {
    std::lock_guard lock(shm_mutex_);
    if (shm_probed_) return shm_;
    std::shared_ptr<gds_base::Datastore> store;
    pmix_proc_t job{};
    {
        std::shared_lock view(view_mutex_);
        if (!store_ || self_hosted_) return nullptr;
        store = store_;
        job = self_;
    }
    shm_probed_ = true;
    job.rank = PMIX_RANK_WILDCARD;
    std::string name, data_name;
    auto st = store->read([&](const mca::gds::Module &m) {
        return m.fetch(job, wire::PMIXPP_FENCE_SHM_KEY, {}, [&](const pmix_value_t &v) {
            if (v.type == PMIX_STRING && v.data.string != nullptr) name = v.data.string;
        });
    });
    if (!st.ok() || name.empty()) return nullptr;  // the job spans nodes, or segments are off
    std::string error;
    shm_ = wire::ShmFence::open(name, error);
    if (!shm_) {
        // The server joins the barrier for this process's fences instead.
        mca::framework_logger("client")->info("client: fences go through the server: {}", error);
        return shm_;
    }
    (void)store->read([&](const mca::gds::Module &m) {
        return m.fetch(job, wire::PMIXPP_FENCE_DATA_KEY, {}, [&](const pmix_value_t &v) {
            if (v.type == PMIX_STRING && v.data.string != nullptr) data_name = v.data.string;
        });
    });
    if (!data_name.empty() && wire::ShmData::enabled()) {
        shm_data_ = wire::ShmData::open(data_name, error);
        if (!shm_data_) {
            // The server sends this process its fences' data through the socket.
            mca::framework_logger("client")->info("client: fence data comes through the server: {}",
                                                  error);
        }
    }
    return shm_;
}

std::shared_ptr<wire::ShmData> Client::fence_data_segment() {
    if (!fence_segment()) return nullptr;
    std::lock_guard lock(shm_mutex_);
    return shm_data_;
}

pmix_status_t Client::store_fence_data(std::vector<std::uint8_t> &inline_stream,
                                       wire::BodyReader &r) {
    // On the gds logger (gds_base_verbose 5): where the datastore's peer data came from.
    auto log = mca::framework_logger("gds");
    if (r.finished()) {
        log->debug("client: fence data: {} bytes through the socket", inline_stream.size());
        store_stream(inline_stream);
        return PMIX_SUCCESS;
    }
    std::uint64_t seq = 0, length = 0;
    if (!r.u64(seq) || !r.u64(length) || !r.finished()) return PMIX_ERR_UNPACK_FAILURE;
    auto data = fence_data_segment();
    std::string error;
    std::span<const std::uint8_t> records;
    if (data) records = data->read(seq, length, error);
    if (!data || records.size() != length) {
        // The server answers in the segment only those that said they map it.
        log->error("client: fence data {} not readable in the job's segment: {}", seq,
                   data ? error : "not mapped");
        return PMIX_ERR_UNPACK_FAILURE;
    }
    log->debug("client: fence data: {} bytes read in the job's segment", length);
    store_stream(records);
    data->consumed(self().rank, seq);
    return PMIX_SUCCESS;
}

void Client::wake_fence_waiters() {
    std::lock_guard lock(shm_mutex_);
    if (shm_) shm_->wake_all();
}

void Client::drop_fence_segment() {
    std::lock_guard lock(shm_mutex_);
    shm_.reset();
    shm_data_.reset();
    shm_probed_ = false;
    lost_ = false;
    lazy_.clear();
}

std::optional<pmix_status_t> Client::fence_in_shm(const std::vector<pmix_proc_t> &procs,
                                                  bool collect, std::uint32_t timeout_s) {
    if (collect || ProgressEngine::instance().on_thread()) return std::nullopt;
    const pmix_proc_t me = self();
    if (procs.size() > 1 ||
        (procs.size() == 1 && (std::strncmp(procs[0].nspace, me.nspace, PMIX_MAX_NSLEN) != 0 ||
                               procs[0].rank != PMIX_RANK_WILDCARD))) {
        return std::nullopt;
    }
    auto seg = fence_segment();
    if (!seg || me.rank >= seg->nprocs()) return std::nullopt;
    // Without a server this process's arrival must not count (it could
    // complete a generation for the others): fail as the socket path does.
    if (lost_.load()) return PMIX_ERR_LOST_CONNECTION;
    wire::ShmFence::Arrival arrival;
    if (pmix_status_t st = seg->arrive(false, arrival); st != PMIX_SUCCESS) return st;
    if (arrival.completed) {
        if (arrival.proxied > 0) {
            // The server joined for some participants: it answers them now.
            const std::uint32_t gen = arrival.gen;
            ProgressEngine::instance().post([this, gen] {
                auto body = BodyWriter().u32(gen).take();
                if (channel_)
                    channel_->send(static_cast<std::uint16_t>(Command::fence_shm_done), next_tag_++,
                                   0, body);
            });
        }
        return PMIX_SUCCESS;
    }
    return seg->wait(arrival.gen, timeout_s, lost_);
}

}  // namespace pmixpp::client
