// Lazy decode of peers' data (lazy_modex.hpp).
#include "client/lazy_modex.hpp"

#include <cstring>
#include <span>

#include "mca/logging.hpp"

namespace pmixpp::client {

namespace {

std::string nspace_of(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
}

bool job_level(pmix_rank_t r) {
    return r == PMIX_RANK_WILDCARD || r == PMIX_RANK_UNDEF;
}

}  // namespace

void LazyModex::add(std::vector<wire::ModexRecord> &&records, const pmix_proc_t &self,
                    const std::shared_ptr<gds_base::Datastore> &store) {
    std::lock_guard lock(mutex_);
    if (store_ != store.get()) {
        pending_.clear();
        pending_bytes_ = 0;
        pending_count_.store(0);
        store_ = store.get();
    }
    const std::string me = nspace_of(self);
    for (auto &rec : records) {
        Key key{nspace_of(rec.proc), rec.proc.rank};
        if (key.first == me && key.second == self.rank) continue;  // our own data is all here
        auto &blobs = pending_[key];
        if (rec.whole) {
            // Everything the process committed: what is pending is in it.
            for (const auto &b : blobs) pending_bytes_ -= b.bytes.size();
            pending_count_.fetch_sub(blobs.size());
            blobs.clear();
        } else if (blobs.size() >= kMaxBlocks) {
            decode(key, *store, "too many pending");
        }
        pending_bytes_ += rec.blob.size();
        pending_count_.fetch_add(1);
        pending_[key].push_back(Blob{rec.proc, std::move(rec.blob)});
    }
    if (pending_bytes_ > kMaxBytes) {
        std::vector<Key> keys;
        for (const auto &[k, b] : pending_) keys.push_back(k);
        for (const auto &k : keys) decode(k, *store, "too many bytes pending");
    }
}

void LazyModex::materialize(const pmix_proc_t &target,
                            const std::shared_ptr<gds_base::Datastore> &store) {
    if (pending_count_.load() == 0) return;
    std::lock_guard lock(mutex_);
    if (store_ != store.get() || pending_.empty()) return;
    const std::string ns = nspace_of(target);
    if (!job_level(target.rank)) decode({ns, target.rank}, *store, "on a Get");
    decode({ns, PMIX_RANK_WILDCARD}, *store, "on a Get");
    decode({ns, PMIX_RANK_UNDEF}, *store, "on a Get");
}

void LazyModex::clear() {
    std::lock_guard lock(mutex_);
    pending_.clear();
    pending_bytes_ = 0;
    pending_count_.store(0);
    store_ = nullptr;
}

void LazyModex::decode(const Key &key, gds_base::Datastore &store, const char *why) {
    auto it = pending_.find(key);
    if (it == pending_.end()) return;
    auto blobs = std::move(it->second);
    pending_.erase(it);
    pending_count_.fetch_sub(blobs.size());
    for (const auto &b : blobs) {
        pending_bytes_ -= b.bytes.size();
        auto st = store.write([&](mca::gds::Module &m) {
            return m.store_modex(
                b.proc, std::span<const std::byte>(
                            reinterpret_cast<const std::byte *>(b.bytes.data()), b.bytes.size()));
        });
        if (!st.ok())
            mca::framework_logger("client")->warn("client: modex data of {}:{}: {}", key.first,
                                                  key.second, st.message());
    }
    const auto total = decoded_.fetch_add(blobs.size()) + blobs.size();
    // On the gds logger (gds_base_verbose 5), as where the data came from.
    mca::framework_logger("gds")->debug("client: decoded {} blob(s) of {}:{} {} ({} in all)",
                                        blobs.size(), key.first, key.second, why, total);
}

}  // namespace pmixpp::client
