// ForkEnvironments (fork_env.hpp): per-namespace templates of a child's
// environment, copied by PMIx_server_setup_fork in the host's thread.
#include "server/fork_env.hpp"

#include <cstring>
#include <utility>

namespace pmixpp::server {

mca::Environment ForkTemplate::for_child(const pmix_proc_t &child) const {
    mca::Environment env = this->env;
    if (rank_from_child) env["PMIX_RANK"] = std::to_string(child.rank);
    return env;
}

std::uint64_t ForkEnvironments::epoch() const {
    std::lock_guard lock(mutex_);
    return epoch_;
}

std::uint64_t ForkEnvironments::invalidate() {
    std::lock_guard lock(mutex_);
    templates_.clear();
    return ++epoch_;
}

void ForkEnvironments::store(const std::string &nspace, std::uint64_t epoch, ForkTemplate tmpl) {
    std::lock_guard lock(mutex_);
    if (epoch != epoch_) return;  // something changed since the builder's epoch
    templates_.insert_or_assign(nspace, std::move(tmpl));
}

std::optional<mca::Environment> ForkEnvironments::lookup(const pmix_proc_t &child) const {
    const std::string nspace(child.nspace, strnlen(child.nspace, PMIX_MAX_NSLEN));
    std::lock_guard lock(mutex_);
    auto it = templates_.find(nspace);
    if (it == templates_.end() || it->second.per_child) return std::nullopt;
    return it->second.for_child(child);
}

}  // namespace pmixpp::server
