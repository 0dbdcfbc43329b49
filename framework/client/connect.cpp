// PMIx_Connect / PMIx_Disconnect (and their _nb forms) on the client side.
//
// Both are collectives that the server gathers like a fence
// (framework/server/connect.cpp). A connect's reply carries the job info of
// the other participating nspaces and the participants' committed data; both
// go into this process's store, so Gets of the other job's job-level keys
// and of its processes' keys are answered locally afterwards. PMIX_TIMEOUT
// bounds the wait here as on the server.
//
// The C entry points are in ../api/connect_api.cpp.
#include <pmix.h>

#include <cstring>

#include "client/client.hpp"
#include "client/request_util.hpp"
#include "mca/logging.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::client {

using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Command;

pmix_status_t Client::store_job_blob(std::string_view nspace, std::span<const std::uint8_t> blob) {
    std::shared_ptr<gds_base::Datastore> store;
    {
        std::shared_lock lock(view_mutex_);
        store = store_;
    }
    if (!store) return PMIX_ERR_INIT;
    auto st = store->write([&](mca::gds::Module &m) {
        return m.store_job(
            nspace, std::span<const std::byte>(reinterpret_cast<const std::byte *>(blob.data()),
                                               blob.size()));
    });
    if (!st.ok()) {
        mca::framework_logger("client")->warn("client: job info of {}: {}", nspace, st.message());
    }
    return st.code();
}

void Client::connect_async(Command command, std::vector<pmix_proc_t> procs, std::uint32_t timeout_s,
                           std::shared_ptr<wire::InfoArray> info,
                           std::function<void(pmix_status_t)> done) {
    if (!connected()) {
        // A server process is no participant of its clients' collectives.
        done(has_view() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_INIT);
        return;
    }
    auto body = BodyWriter()
                    .procs(procs.data(), procs.size())
                    .u32(timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    const bool connect = command == Command::connect;
    bounded_request(command, std::move(body), timeout_s,
                    [this, connect, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                        done(connect && s == PMIX_SUCCESS ? store_connect_reply(r) : s);
                    });
}

// The connect reply: the other jobs' info blobs, then the participants'
// committed data as a modex record stream.
pmix_status_t Client::store_connect_reply(BodyReader &r) {
    std::uint32_t n = 0;
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> jobs;
    r.u32(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        std::string ns;
        std::vector<std::uint8_t> blob;
        r.str(ns);
        r.bytes(blob);
        jobs.emplace_back(std::move(ns), std::move(blob));
    }
    std::vector<std::uint8_t> stream;
    r.bytes(stream);
    if (!r.finished()) return PMIX_ERR_UNPACK_FAILURE;
    for (const auto &[ns, blob] : jobs) store_job_blob(ns, blob);
    store_stream(stream);
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::client
