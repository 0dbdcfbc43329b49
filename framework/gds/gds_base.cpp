#include "gds/gds_base.hpp"

#include <mutex>

#include "mca/select.hpp"

namespace pmixpp::gds_base {

mca::Result<std::shared_ptr<Datastore>> Datastore::acquire() {
    static std::mutex mutex;
    static std::weak_ptr<Datastore> current;
    std::lock_guard lock(mutex);
    if (auto existing = current.lock()) return existing;

    auto selected = mca::select_one<mca::gds::Module>(mca::ComponentRepository::process_wide(),
                                                      mca::gds::kFrameworkName);
    if (!selected) return mca::to_status(selected.error());
    auto store = std::make_shared<Datastore>();
    store->component_ = selected.value().component;
    store->interface_minor_ = selected.value().interface_minor;
    store->module_ = selected.value().module;
    store->handle_ = std::move(selected.value().handle);
    current = store;
    return store;
}

mca::Result<std::shared_ptr<const mca::gds::Blob>> Datastore::job_blob(
    std::string_view nspace) const {
    std::shared_lock lock(mutex_);  // generation_ and the module stay as they are
    {
        std::lock_guard cache(cache_mutex_);
        if (cached_generation_ != generation_) {
            job_blobs_.clear();
            cached_generation_ = generation_;
        }
        if (auto it = job_blobs_.find(nspace); it != job_blobs_.end()) return it->second;
    }
    auto blob = static_cast<const mca::gds::Module &>(*module_).assemble_job(nspace);
    if (!blob) return blob.status();
    auto shared = std::make_shared<const mca::gds::Blob>(std::move(blob).value());
    std::lock_guard cache(cache_mutex_);
    job_blobs_.insert_or_assign(std::string(nspace), shared);
    return shared;
}

}  // namespace pmixpp::gds_base
