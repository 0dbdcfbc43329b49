// IO forwarding from a client's or a tool's side (docs/iof.md):
// PMIx_IOF_pull / _deregister / _push and the `iof` messages the server
// sends for a pull. The server's side is server/iof.cpp.
//
// Threads: the C entry points check and copy their arguments and post the
// work to the progress thread; registrations (iof_pulls_) live there and the
// output handlers run there.
//
// The C entry points are in ../api/iof_api.cpp.
#include <pmix.h>
#include <pmix_tool.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "client/request_util.hpp"
#include "event/event.hpp"
#include "mca/logging.hpp"

namespace pmixpp::client {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Command;

namespace {

auto log() {
    return mca::framework_logger("client");
}

// Writes all of `bytes` to `fd` (a pull without an output handler).
void write_all(int fd, const std::vector<std::uint8_t> &bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

void Client::iof_pull(std::vector<pmix_proc_t> procs, pmix_iof_channel_t channels,
                      std::shared_ptr<wire::InfoArray> directives, pmix_iof_cbfunc_t cbfunc,
                      std::function<void(pmix_status_t, std::size_t)> done) {
    const std::size_t ref = next_iof_++;
    auto body = BodyWriter()
                    .u64(ref)
                    .procs(procs.data(), procs.size())
                    .u32(channels)
                    .infos(directives->data(), directives->size())
                    .take();
    // Registered when the server accepted it: its replayed output follows the reply.
    bounded_request(Command::iof_pull, std::move(body),
                    timeout_of(directives->data(), directives->size()),
                    [this, ref, cbfunc, done = std::move(done)](pmix_status_t s, BodyReader &) {
                        if (s == PMIX_SUCCESS) iof_pulls_[ref] = cbfunc;
                        done(s, s == PMIX_SUCCESS ? ref : 0);
                    });
}

void Client::iof_deregister(std::size_t ref, std::shared_ptr<wire::InfoArray> directives,
                            std::function<void(pmix_status_t)> done) {
    // Output arriving from now on is discarded (standard).
    if (iof_pulls_.erase(ref) == 0) {
        done(PMIX_ERR_NOT_FOUND);
        return;
    }
    request(Command::iof_deregister,
            BodyWriter().u64(ref).infos(directives->data(), directives->size()).take(),
            [done = std::move(done)](pmix_status_t s, BodyReader &) { done(s); });
}

void Client::handle_iof(wire::Frame &frame) {
    BodyReader r(frame.body);
    std::uint64_t ref = 0;
    pmix_proc_t source{};
    std::uint32_t channel = 0;
    std::vector<std::uint8_t> payload;
    wire::InfoArray info;
    r.u64(ref);
    r.proc(source);
    r.u32(channel);
    r.bytes(payload);
    r.infos(info);
    if (!r.finished()) {
        log()->warn("client: malformed iof message from the server");
        return;
    }
    auto it = iof_pulls_.find(ref);
    if (it == iof_pulls_.end()) return;  // deregistered: discarded
    if (it->second == nullptr) {         // standard: NULL cbfunc writes to our own stdout/stderr
        write_all((channel & PMIX_FWD_STDERR_CHANNEL) != 0 ? STDERR_FILENO : STDOUT_FILENO,
                  payload);
        return;
    }
    // The handler gets its own malloc'd copy. We free it after the call
    // unless the handler released it with PMIX_BYTE_OBJECT_DESTRUCT (which
    // leaves bytes NULL), as OpenPMIx does.
    pmix_byte_object_t bo{nullptr, payload.size()};
    if (!payload.empty()) {
        bo.bytes = static_cast<char *>(std::malloc(payload.size()));
        if (bo.bytes == nullptr) return;
        std::memcpy(bo.bytes, payload.data(), payload.size());
    }
    it->second(ref, static_cast<pmix_iof_channel_t>(channel), &source, &bo, info.data(),
               info.size());
    std::free(bo.bytes);
}

}  // namespace pmixpp::client
