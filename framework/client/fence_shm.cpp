// PMIx_Fence in the job's shared-memory barrier (wire/shm_fence.hpp): a
// blocking fence over the caller's whole namespace, called on any thread but
// the progress thread, when the server offered a segment; with
// PMIX_COLLECT_DATA when it offered fence areas too (wire::ShmArea: each
// rank writes its commits into its own area before it arrives and reads the
// others' once the generation completed).
#include <algorithm>
#include <cstring>

#include "client/client.hpp"
#include "mca/logging.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::client {

using runtime::ProgressEngine;
using wire::BodyReader;
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
    std::string areas_name;
    (void)store->read([&](const mca::gds::Module &m) {
        return m.fetch(job, wire::PMIXPP_FENCE_AREAS_KEY, {}, [&](const pmix_value_t &v) {
            if (v.type == PMIX_STRING && v.data.string != nullptr) areas_name = v.data.string;
        });
    });
    if (!areas_name.empty() && wire::ShmArea::enabled()) {
        std::vector<std::unique_ptr<wire::ShmArea>> areas;
        for (std::uint32_t r = 0; r < shm_->nprocs(); ++r) {
            auto a = wire::ShmArea::open(wire::ShmArea::name_for(areas_name, r), error);
            if (!a) {
                // The server writes this process's area and reads the others' for it.
                mca::framework_logger("client")->info(
                    "client: collecting fences go through the server: {}", error);
                areas.clear();
                break;
            }
            areas.push_back(std::move(a));
        }
        areas_ = std::move(areas);
    }
    {
        // A process that reads the areas, itself or through the server.
        std::lock_guard pub(pub_mutex_);
        have_.assign(shm_->nprocs(), 0);
        pub_on_ = !areas_.empty();
    }
    return shm_;
}

std::shared_ptr<wire::ShmData> Client::fence_data_segment() {
    if (!fence_segment()) return nullptr;
    std::lock_guard lock(shm_mutex_);
    return shm_data_;
}

pmix_status_t Client::store_fence_data(std::vector<std::uint8_t> &inline_stream,
                                       wire::BodyReader &r, std::vector<pmix_rank_t> &refetch) {
    // On the gds logger (gds_base_verbose 5): where the datastore's peer data came from.
    auto log = mca::framework_logger("gds");
    if (r.finished()) {
        log->debug("client: fence data: {} bytes through the socket", inline_stream.size());
        store_stream(inline_stream);
        return PMIX_SUCCESS;
    }
    std::uint64_t seq = 0, length = 0;
    if (!r.u64(seq)) return PMIX_ERR_UNPACK_FAILURE;
    if (seq == 0) return store_fence_areas(r, refetch);  // a proxied fence through the barrier
    if (!r.u64(length) || !r.finished()) return PMIX_ERR_UNPACK_FAILURE;
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
    held_.clear();
    held_count_.store(0);
    {
        std::lock_guard pub(pub_mutex_);
        pub_bytes_.clear();
        pub_from_ = 0;
        pub_whole_ = false;
        ++pub_epoch_;
        pub_total_ = 0;
        pub_on_ = false;
        have_.clear();
    }
    areas_.clear();
    shm_.reset();
    shm_data_.reset();
    shm_probed_ = false;
    lost_ = false;
    lazy_.clear();
}

std::optional<pmix_status_t> Client::fence_in_shm(const std::vector<pmix_proc_t> &procs,
                                                  bool collect, std::uint32_t timeout_s) {
    if (ProgressEngine::instance().on_thread()) return std::nullopt;
    const pmix_proc_t me = self();
    if (procs.size() > 1 ||
        (procs.size() == 1 && (std::strncmp(procs[0].nspace, me.nspace, PMIX_MAX_NSLEN) != 0 ||
                               procs[0].rank != PMIX_RANK_WILDCARD))) {
        return std::nullopt;
    }
    auto seg = fence_segment();
    if (!seg || me.rank >= seg->nprocs()) return std::nullopt;
    if (collect) {
        // Areas are mapped once with the segment, or never.
        std::lock_guard lock(shm_mutex_);
        if (areas_.size() != seg->nprocs()) return std::nullopt;
    }
    // Without a server this process's arrival must not count (it could
    // complete a generation for the others): fail as the socket path does.
    if (lost_.load()) return PMIX_ERR_LOST_CONNECTION;
    if (collect) return fence_collect_in_shm(seg, timeout_s);
    settle_before_arrival(seg->current_gen());
    wire::ShmFence::Arrival arrival;
    if (pmix_status_t st = seg->arrive(false, arrival); st != PMIX_SUCCESS) return st;
    if (arrival.completed) {
        if (arrival.proxied > 0) {
            // The server joined for some participants: it answers them now.
            const std::uint32_t gen = arrival.gen;
            ProgressEngine::instance().post([this, gen] {
                auto body = BodyWriter().u32(gen).take();
                flush_held_on_thread();
                if (channel_)
                    channel_->send(static_cast<std::uint16_t>(Command::fence_shm_done), next_tag_++,
                                   0, body);
            });
        }
        return PMIX_SUCCESS;
    }
    return seg->wait(arrival.gen, timeout_s, lost_);
}

pmix_status_t Client::fence_collect_in_shm(const std::shared_ptr<wire::ShmFence> &seg,
                                           std::uint32_t timeout_s) {
    auto log = mca::framework_logger("gds");
    const pmix_proc_t me = self();
    wire::ShmArea *mine = nullptr;
    {
        std::lock_guard lock(shm_mutex_);
        mine = areas_[me.rank].get();  // fixed until drop_fence_segment (finalize)
    }
    // Write what this process committed since it last published, for the
    // generation it is about to join; a mend between the two (a peer came
    // back) starts another generation: write again.
    wire::ShmFence::Arrival arrival;
    std::size_t published = 0;
    std::uint64_t published_to = 0, epoch = 0;
    for (;;) {
        const std::uint32_t gen = seg->current_gen();
        settle_before_arrival(gen);
        {
            std::lock_guard pub(pub_mutex_);
            if (!pub_whole_ && !pub_bytes_.empty() && 2 * pub_bytes_.size() >= pub_total_) {
                // Changes of at least half of its whole data (as last
                // published: new keys since make the whole at most 3 times
                // these changes) go as the whole, marked so, as the server
                // does (server/README.md): readers drop this process's older
                // undecoded data, so re-Put values do not pile up.
                std::shared_ptr<gds_base::Datastore> store;
                {
                    std::shared_lock view(view_mutex_);
                    store = store_;
                }
                auto whole = store ? store->read([&](const mca::gds::Module &m) {
                    return m.assemble_modex(me, PMIX_LOCAL);
                })
                                   : mca::Result<mca::gds::Blob>(mca::gds::Blob{});
                if (store && whole) {
                    const auto *b = reinterpret_cast<const std::uint8_t *>(whole.value().data());
                    pub_bytes_.assign(b, b + whole.value().size());
                    pub_whole_ = true;
                    ++pub_epoch_;
                    pub_total_ = pub_bytes_.size();
                }
            }
            published = pub_bytes_.size();
            published_to = seg->commits(me.rank);
            epoch = pub_epoch_;
            std::string error;
            if (!mine->publish(gen, pub_whole_ ? 0 : pub_from_, published_to,
                               pub_whole_ ? std::uint32_t{wire::ShmArea::kWhole} : 0u, pub_bytes_,
                               error)) {
                // Its peers ask the server for this process's data (it has every commit).
                log->warn("client: fence area: {} (peers ask the server)", error);
            }
        }
        if (pmix_status_t st = seg->arrive(false, arrival, &gen); st != PMIX_SUCCESS) return st;
        if (!arrival.stale) break;
    }
    if (arrival.completed && arrival.proxied > 0) {
        // The server joined for some participants: it answers them now.
        const std::uint32_t gen = arrival.gen;
        ProgressEngine::instance().post([this, gen] {
            auto body = BodyWriter().u32(gen).take();
            flush_held_on_thread();
            if (channel_)
                channel_->send(static_cast<std::uint16_t>(Command::fence_shm_done), next_tag_++, 0,
                               body);
        });
    }
    if (!arrival.completed) {
        if (pmix_status_t st = seg->wait(arrival.gen, timeout_s, lost_); st != PMIX_SUCCESS)
            return st;
    }
    // Every peer's area for this generation: intact until this process
    // arrives again (its writer passes the next generation only then).
    std::vector<AreaView> views;
    std::size_t bytes = 0;
    {
        std::lock_guard lock(shm_mutex_);
        for (std::uint32_t r = 0; r < areas_.size(); ++r) {
            if (r == me.rank) continue;
            wire::ShmArea::View v;
            std::string error;
            if (!areas_[r]->read(arrival.gen, v, error)) {
                log->warn("client: fence area of rank {}: {} (asked of the server)", r, error);
                v.published = true;
                v.flags = wire::ShmArea::kAbsent;
                v.data = {};
            }
            if (!v.published) continue;  // it arrived without data
            views.push_back(AreaView{r, v.from, v.to, v.flags, v.data, arrival.gen, v.where});
            bytes += v.data.size();
        }
    }
    std::vector<pmix_rank_t> refetch;
    take_areas(views, refetch);
    log->debug(
        "client: fence data: {} bytes read in the peers' areas (generation {}, {} asked "
        "of the server)",
        bytes, arrival.gen, refetch.size());
    {
        std::lock_guard pub(pub_mutex_);
        if (pub_epoch_ == epoch) {
            // Published: what was committed meanwhile stays for the next one.
            pub_bytes_.erase(pub_bytes_.begin(),
                             pub_bytes_.begin() + static_cast<std::ptrdiff_t>(published));
            pub_from_ = published_to;
            pub_whole_ = false;
        }
    }
    if (refetch.empty()) return PMIX_SUCCESS;
    auto done = std::make_shared<runtime::Completion<bool>>();
    if (!ProgressEngine::instance().post(
            [this, refetch, done] { refetch_peers(refetch, [done] { done->complete(true); }); })) {
        return PMIX_ERR_LOST_CONNECTION;
    }
    done->wait();
    return PMIX_SUCCESS;
}

void Client::take_areas(const std::vector<AreaView> &views, std::vector<pmix_rank_t> &refetch) {
    const pmix_proc_t me = self();
    // Bytes that come copied (the server's copy of the areas, a proxied
    // fence) are newer than any held ones: those go into lazy_ first.
    if (std::any_of(views.begin(), views.end(), [](const AreaView &v) { return !v.where; }))
        settle_held([](const Held &) { return true; }, "before data through the socket");
    std::vector<gds_base::LazyModex::Copy> copies;
    {
        std::lock_guard lock(shm_mutex_);
        std::lock_guard pub(pub_mutex_);
        auto drop_held = [&](pmix_rank_t r) {
            std::erase_if(held_, [r](const Held &h) { return h.rank == r; });
        };
        for (const auto &v : views) {
            // A client that could not map the fence segment (another user)
            // reads the areas through the server only: have_ grows here.
            if (v.rank >= have_.size()) have_.resize(v.rank + 1, 0);
            const bool whole = (v.flags & wire::ShmArea::kWhole) != 0;
            if ((v.flags & wire::ShmArea::kAbsent) != 0 || (!whole && v.from > have_[v.rank])) {
                // Not written, or this process missed some of its commits
                // (it arrived without data, or it came back after a
                // Finalize): the server sends all of it.
                drop_held(v.rank);
                refetch.push_back(v.rank);
            } else if (!v.data.empty() && v.where) {
                // Left in the peer's area until a Get asks for it (or this
                // process arrives in gen + 2); its whole data makes what
                // was held of it moot.
                if (whole) drop_held(v.rank);
                held_.push_back(Held{v.rank, v.gen, whole, *v.where});
            } else if (!v.data.empty()) {
                gds_base::LazyModex::Copy c;
                c.proc = me;
                c.proc.rank = v.rank;
                c.data = v.data;
                c.whole = whole;
                copies.push_back(c);
            }
            have_[v.rank] = std::max(have_[v.rank], v.to);
        }
        held_count_.store(held_.size());
    }
    if (copies.empty()) return;
    std::shared_ptr<gds_base::Datastore> store;
    {
        std::shared_lock lock(view_mutex_);
        store = store_;
    }
    if (store) lazy_.add_copies(copies, me, store);
}

void Client::settle_before_arrival(std::uint32_t gen) {
    // Those of the generation just before `gen` stay intact through this
    // arrival; the older ones not (wire/shm_fence.hpp, ShmArea).
    settle_held([gen](const Held &h) { return wire::ShmFence::after(h.gen) != gen; },
                "before arriving");
}

void Client::settle_held(const std::function<bool(const Held &)> &which, const char *why) const {
    if (held_count_.load() == 0) return;
    std::shared_ptr<gds_base::Datastore> store;
    pmix_proc_t me{};
    {
        std::shared_lock view(view_mutex_);
        store = store_;
        me = self_;
    }
    std::vector<wire::ModexRecord> records;
    std::vector<pmix_rank_t> lost;
    {
        std::lock_guard lock(shm_mutex_);
        for (auto it = held_.begin(); it != held_.end();) {
            if (!which(*it)) {
                ++it;
                continue;
            }
            wire::ModexRecord rec{me, {}, it->whole};
            rec.proc.rank = it->rank;
            if (std::find(lost.begin(), lost.end(), it->rank) != lost.end()) {
                // Deltas after a lost one would be merged onto missing data.
            } else if (it->rank < areas_.size() && areas_[it->rank]->copy(it->where, rec.blob)) {
                records.push_back(std::move(rec));
            } else {
                lost.push_back(it->rank);
            }
            it = held_.erase(it);
        }
        held_count_.store(held_.size());
        if (!lost.empty()) {
            // Replaced after a generation that never completed (a timeout,
            // a mend): the next fence asks the server, and so does this.
            std::lock_guard pub(pub_mutex_);
            for (const auto r : lost) {
                std::erase_if(held_, [r](const Held &h) { return h.rank == r; });
                if (r < have_.size()) have_[r] = 0;
            }
            held_count_.store(held_.size());
        }
    }
    if (store && !records.empty()) {
        // On the gds logger (gds_base_verbose 5), as the fence's own lines.
        auto log = mca::framework_logger("gds");
        if (log->should_log(spdlog::level::debug)) {
            std::size_t bytes = 0;
            for (const auto &r : records) bytes += r.blob.size();
            log->debug(
                "client: fence data: {} bytes of {} peer publication(s) copied from their "
                "areas {}",
                bytes, records.size(), why);
        }
        lazy_.add(std::move(records), me, store);
    }
    if (!lost.empty()) {
        mca::framework_logger("gds")->warn(
            "client: {} peer(s)' fence data replaced before it was read: asked of the server",
            lost.size());
        auto *self = const_cast<Client *>(this);
        ProgressEngine::instance().post([self, lost] { self->refetch_peers(lost, [] {}); });
    }
}

void Client::refetch_peers(std::vector<pmix_rank_t> ranks, std::function<void()> then) {
    auto left = std::make_shared<std::size_t>(ranks.size());
    auto fn = std::make_shared<std::function<void()>>(std::move(then));
    if (ranks.empty()) {
        (*fn)();
        return;
    }
    const pmix_proc_t me = self();
    for (const auto r : ranks) {
        pmix_proc_t target = me;
        target.rank = r;
        auto body = BodyWriter()
                        .proc(target)
                        .str(std::string{})
                        .boolean(true)  // immediate: what it committed, or nothing
                        .u32(0)
                        .infos(nullptr, 0)
                        .take();
        request(Command::get, std::move(body), [this, left, fn](pmix_status_t s, BodyReader &rd) {
            if (s == PMIX_SUCCESS) {
                std::vector<std::uint8_t> job, stream;
                if (rd.bytes(job) && rd.bytes(stream)) store_stream(stream);
            }
            if (--*left == 0) (*fn)();
        });
    }
}

pmix_status_t Client::store_fence_areas(BodyReader &r, std::vector<pmix_rank_t> &refetch) {
    std::uint32_t n = 0;
    if (!r.u32(n)) return PMIX_ERR_UNPACK_FAILURE;
    std::vector<std::vector<std::uint8_t>> bufs(n);
    std::vector<AreaView> views(n);
    std::size_t bytes = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        if (!r.u32(views[i].rank) || !r.u64(views[i].from) || !r.u64(views[i].to) ||
            !r.u32(views[i].flags) || !r.bytes(bufs[i])) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        views[i].data = bufs[i];
        bytes += bufs[i].size();
    }
    if (!r.finished()) return PMIX_ERR_UNPACK_FAILURE;
    take_areas(views, refetch);
    mca::framework_logger("gds")->debug(
        "client: fence data: {} bytes of the peers' areas through the socket ({} asked of the "
        "server)",
        bytes, refetch.size());
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::client
