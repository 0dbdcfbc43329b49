// TopologySharing (topology_share.hpp).
#include "server/topology_share.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "runtime/topology.hpp"
#include "runtime/devices.hpp"

namespace pmixpp::server {

namespace {

auto log() {
    return mca::framework_logger("server");
}

using mca::find_info;  // pmixpp/mca/info.hpp

// A bool attribute given as PMIX_BOOL or as a bare key (PMIX_UNDEF); absent: false.
bool flag(const pmix_info_t *i) {
    return i != nullptr && mca::as_flag(i->value).value_or(false);
}

}  // namespace

pmix_status_t TopologySharing::start(std::span<const pmix_info_t> info) {
    share_ = flag(find_info(info, PMIX_SERVER_SHARE_TOPOLOGY));
    if (const pmix_info_t *t = find_info(info, PMIX_TOPOLOGY2)) {
        const pmix_topology_t *topo = t->value.type == PMIX_TOPO ? t->value.data.topo : nullptr;
        if (topo == nullptr || topo->topology == nullptr || topo->source == nullptr ||
            ::strncasecmp(topo->source, "hwloc", 5) != 0)
            return PMIX_ERR_BAD_PARAM;
        if (auto rc = runtime::adopt_topology(topo->topology); rc != PMIX_SUCCESS) return rc;
        share_ = true;  // a host that hands its topology over means it to be used
    }
    dir_.clear();
    if (const pmix_info_t *d = find_info(info, PMIX_SERVER_TMPDIR);
        d != nullptr && d->value.type == PMIX_STRING && d->value.data.string != nullptr)
        dir_ = d->value.data.string;
    if (dir_.empty()) {
        const char *tmp = std::getenv("TMPDIR");
        dir_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    return PMIX_SUCCESS;
}

void TopologySharing::stop() noexcept {
    if (!file_.empty()) ::unlink(file_.c_str());
    file_.clear();
    tried_ = false;
    share_ = false;
}

std::optional<wire::InfoArray> TopologySharing::job_info(std::span<const pmix_info_t> info) {
    if (!share_ || find_info(info, PMIX_TOPOLOGY_FILE) != nullptr ||
        find_info(info, PMIX_HWLOC_XML_V2) != nullptr)
        return std::nullopt;
    if (!tried_) {
        tried_ = true;
        pmix_status_t status = PMIX_SUCCESS;
        const std::string xml = runtime::topology_xml(runtime::local_topology(&status));
        const std::string path = dir_ + "/pmixpp." + std::to_string(::getpid()) + ".topology.xml";
        const std::string partial = path + ".partial";
        std::FILE *f = xml.empty() ? nullptr : std::fopen(partial.c_str(), "w");
        bool ok = f != nullptr && std::fwrite(xml.data(), 1, xml.size(), f) == xml.size();
        if (f != nullptr) ok = std::fclose(f) == 0 && ok;
        // Complete under its name, or not there at all.
        if (ok && std::rename(partial.c_str(), path.c_str()) == 0) {
            file_ = path;
        } else {
            if (f != nullptr) ::unlink(partial.c_str());
            log()->warn("server: cannot share the topology in {}", dir_);
        }
    }
    if (file_.empty()) return std::nullopt;
    auto out = wire::InfoArray::copy_of(info);
    if (out.size() != info.size()) return std::nullopt;
    pmix_info_t entry;
    std::memset(&entry, 0, sizeof entry);
    PMIx_Info_load(&entry, PMIX_TOPOLOGY_FILE, file_.c_str(), PMIX_STRING);
    out.adopt(entry);
    return out;
}

}  // namespace pmixpp::server
