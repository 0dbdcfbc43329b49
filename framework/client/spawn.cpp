// PMIx_Spawn / PMIx_Spawn_nb on the client side: the request goes to the
// server, whose host starts the job (framework/server/spawn.cpp). The reply
// carries the new nspace and its job info, which goes into this process's
// store so the parent reads the child job's job-level keys locally.
//
// The C entry points are in ../api/spawn_api.cpp.
#include <pmix.h>

#include "client/client.hpp"
#include "mca/logging.hpp"
#include "wire/codec.hpp"

namespace pmixpp::client {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Command;

void Client::spawn_async(std::shared_ptr<wire::InfoArray> job_info, std::vector<std::uint8_t> apps,
                         std::function<void(pmix_status_t, std::string)> done) {
    if (!connected()) {
        // A server process asks its host directly, not through this face.
        done(has_view() ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_INIT, {});
        return;
    }
    if (!tool_launcher_) {
        // Standard, "Launching Applications with Tools": tool-directed
        // launches require PMIX_LAUNCHER at PMIx_tool_init (docs/tools.md).
        mca::framework_logger("client")->error(
            "PMIx_Spawn: this tool was initialized without PMIX_LAUNCHER, which a tool that "
            "starts jobs must pass to PMIx_tool_init");
        done(PMIX_ERR_NOT_SUPPORTED, {});
        return;
    }
    auto body = BodyWriter()
                    .infos(job_info ? job_info->data() : nullptr, job_info ? job_info->size() : 0)
                    .bytes(apps)
                    .take();
    request(Command::spawn, std::move(body),
            [this, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                if (s != PMIX_SUCCESS) {
                    done(s, {});
                    return;
                }
                std::string ns;
                std::vector<std::uint8_t> blob;
                r.str(ns);
                r.bytes(blob);
                if (!r.finished() || ns.empty() || ns.size() > PMIX_MAX_NSLEN) {
                    done(PMIX_ERR_UNPACK_FAILURE, {});
                    return;
                }
                if (!blob.empty()) store_job_blob(ns, blob);
                done(PMIX_SUCCESS, std::move(ns));
            });
}

}  // namespace pmixpp::client
