// Lazy decode of peers' data (lazy_modex.hpp).
#include "gds/lazy_modex.hpp"

#include <cstring>
#include <span>

#include "mca/logging.hpp"

namespace pmixpp::gds_base {

namespace {

std::string nspace_of(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
}

bool job_level(pmix_rank_t r) {
    return r == PMIX_RANK_WILDCARD || r == PMIX_RANK_UNDEF;
}

}  // namespace

void LazyModex::reset_for(const std::shared_ptr<gds_base::Datastore> &store) {
    if (store_ != store.get()) {
        pending_.clear();
        pending_bytes_ = 0;
        pending_count_.store(0);
        store_ = store.get();
    }
}

std::vector<LazyModex::Blob> &LazyModex::slot_for(const Key &key, bool whole,
                                                  gds_base::Datastore &store) {
    auto &blobs = pending_[key];
    if (whole) {
        // Everything the process committed: what is pending is in it.
        for (auto &b : blobs) {
            pending_bytes_ -= b.bytes.size();
            recycle(std::move(b.bytes));
        }
        pending_count_.fetch_sub(blobs.size());
        blobs.clear();
    } else if (blobs.size() >= kMaxBlocks) {
        decode(key, store, "too many pending");
    }
    return pending_[key];
}

void LazyModex::bound(gds_base::Datastore &store) {
    if (pending_bytes_ > kMaxBytes) {
        std::vector<Key> keys;
        for (const auto &[k, b] : pending_) keys.push_back(k);
        for (const auto &k : keys) decode(k, store, "too many bytes pending");
    }
}

void LazyModex::add(std::vector<wire::ModexRecord> &&records, const pmix_proc_t &self,
                    const std::shared_ptr<gds_base::Datastore> &store) {
    std::lock_guard lock(mutex_);
    reset_for(store);
    const std::string me = nspace_of(self);
    for (auto &rec : records) {
        Key key{nspace_of(rec.proc), rec.proc.rank};
        if (key.first == me && key.second == self.rank) continue;  // our own data is all here
        auto &blobs = slot_for(key, rec.whole, *store);
        pending_bytes_ += rec.blob.size();
        pending_count_.fetch_add(1);
        blobs.push_back(Blob{rec.proc, std::move(rec.blob)});
    }
    bound(*store);
}

void LazyModex::add_copies(std::span<const Copy> copies, const pmix_proc_t &self,
                           const std::shared_ptr<gds_base::Datastore> &store) {
    std::lock_guard lock(mutex_);
    reset_for(store);
    const std::string me = nspace_of(self);
    for (const auto &c : copies) {
        Key key{nspace_of(c.proc), c.proc.rank};
        if (key.first == me && key.second == self.rank) continue;
        auto &blobs = slot_for(key, c.whole, *store);
        auto bytes = take_buffer(c.data.size());
        bytes.assign(c.data.begin(), c.data.end());
        pending_bytes_ += bytes.size();
        pending_count_.fetch_add(1);
        blobs.push_back(Blob{c.proc, std::move(bytes)});
    }
    bound(*store);
}

void LazyModex::recycle(std::vector<std::uint8_t> &&buffer) {
    if (buffer.capacity() == 0 || spare_.size() >= kMaxSpare ||
        spare_bytes_ + buffer.capacity() > kMaxSpareBytes) {
        return;  // freed
    }
    spare_bytes_ += buffer.capacity();
    spare_.push_back(std::move(buffer));
}

std::vector<std::uint8_t> LazyModex::take_buffer(std::size_t size) {
    // The smallest spare that holds `size`, else the largest (it grows once).
    std::size_t best = spare_.size();
    for (std::size_t i = 0; i < spare_.size(); ++i) {
        const std::size_t cap = spare_[i].capacity();
        if (cap >= size && (best == spare_.size() || cap < spare_[best].capacity())) best = i;
    }
    if (best == spare_.size()) return {};
    std::vector<std::uint8_t> out = std::move(spare_[best]);
    spare_[best] = std::move(spare_.back());
    spare_.pop_back();
    spare_bytes_ -= out.capacity();
    out.clear();
    return out;
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
    spare_.clear();
    spare_bytes_ = 0;
    pending_.clear();
    pending_bytes_ = 0;
    pending_count_.store(0);
    store_ = nullptr;
}

void LazyModex::forget(std::string_view nspace) {
    std::lock_guard lock(mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->first.first != nspace) {
            ++it;
            continue;
        }
        for (auto &b : it->second) pending_bytes_ -= b.bytes.size();
        pending_count_.fetch_sub(it->second.size());
        it = pending_.erase(it);
    }
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
            mca::framework_logger(face_)->warn("{}: modex data of {}:{}: {}", face_, key.first,
                                               key.second, st.message());
    }
    const auto total = decoded_.fetch_add(blobs.size()) + blobs.size();
    for (auto &b : blobs) recycle(std::move(b.bytes));
    // On the gds logger (gds_base_verbose 5), as where the data came from.
    mca::framework_logger("gds")->debug("{}: decoded {} blob(s) of {}:{} {} ({} in all)", face_,
                                        blobs.size(), key.first, key.second, why, total);
}

}  // namespace pmixpp::gds_base
