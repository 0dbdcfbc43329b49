#include "client/connector.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include <spdlog/fmt/fmt.h>

#include "pmixpp/mca/parameters.hpp"

namespace pmixpp::client {

using mca::Status;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Frame;

namespace {

// The handshake runs on a connection the progress thread does not watch yet:
// blocking frame I/O with a deadline.
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// Tag 0: Client::request numbers from 1, so no other reply can carry it.
constexpr std::uint32_t kHandshakeTag = 0;

bool wait_fd(int fd, short events, Deadline deadline) {
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, INT_MAX)));
        if (n > 0) return true;  // ready, or an error the next read/write reports
        if (n == 0 || errno != EINTR) return false;
    }
}

bool write_all(int fd, std::span<const std::uint8_t> data, Deadline deadline) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n > 0) {
            data = data.subspan(static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_fd(fd, POLLOUT, deadline)) return false;
        } else {
            return false;
        }
    }
    return true;
}

enum class ReadStatus { ok, timeout, closed, malformed };

ReadStatus read_all(int fd, std::uint8_t *data, std::size_t size, Deadline deadline) {
    while (size > 0) {
        const ssize_t n = ::recv(fd, data, size, 0);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
        } else if (n == 0) {
            return ReadStatus::closed;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_fd(fd, POLLIN, deadline)) return ReadStatus::timeout;
        } else {
            return ReadStatus::closed;
        }
    }
    return ReadStatus::ok;
}

// Reads exactly one frame (never a byte of the next: what follows stays in the
// socket for the channel). `reason` says what was malformed.
ReadStatus read_frame(int fd, Deadline deadline, Frame &out, std::string &reason) {
    const wire::FrameLimits &limits = wire::FrameLimits::process_wide();
    std::uint8_t raw[wire::kFrameHeaderSize];
    if (auto st = read_all(fd, raw, sizeof raw, deadline); st != ReadStatus::ok) return st;
    const wire::FrameHeader header = wire::decode_header(raw);
    reason = wire::check_header(header, limits);
    if (!reason.empty()) return ReadStatus::malformed;
    std::vector<std::uint8_t> payload(header.length);
    if (auto st = read_all(fd, payload.data(), payload.size(), deadline); st != ReadStatus::ok)
        return st;
    return wire::open_frame(header, std::move(payload), limits, out, reason)
               ? ReadStatus::ok
               : ReadStatus::malformed;
}

// What a failed candidate means for the search: not reached (try the next),
// reached (its answer ends a Search::first_server), or a failure of ours that
// every candidate would meet (end in any case).
enum class Next { try_next, answered, abort };

// One candidate: connect, send, read, parse.
mca::Result<Handshaken> attempt(const ptl_base::Transports::Target &target,
                                const HandshakeRequest &request, bool &hook_ran, Next &next) {
    const Deadline deadline = Clock::now() + request.per_uri;
    const std::string &uri = target.uri;
    next = Next::try_next;
    auto c = target.module->connect(uri, request.per_uri);
    if (!c) {
        return Status(c.status().code() == PMIX_ERR_TIMEOUT ? PMIX_ERR_TIMEOUT : PMIX_ERR_UNREACH,
                      c.status().message());
    }
    Handshaken out;
    out.uri = uri;
    out.connection = std::move(c).value();
    const int fd = out.connection->fd();
    const auto placement = out.connection->peer_credentials() ? wire::PeerPlacement::local
                                                              : wire::PeerPlacement::maybe_remote;
    std::vector<std::uint8_t> frame_bytes;
    std::string reason;
    if (!wire::build_frame(static_cast<std::uint16_t>(wire::Command::handshake), kHandshakeTag, 0,
                           request.body, wire::FrameLimits::process_wide(), frame_bytes, reason,
                           placement)) {
        next = Next::abort;
        return Status(PMIX_ERR_BAD_PARAM, "handshake not sent: " + reason);
    }
    if (!write_all(fd, frame_bytes, deadline))
        return Status(PMIX_ERR_UNREACH, "handshake not sent to " + out.connection->describe_peer());
    if (!hook_ran && request.while_waiting) {
        hook_ran = true;
        if (Status st = request.while_waiting(); !st.ok()) {
            next = Next::abort;
            return st;
        }
    }

    // From here the server at `uri` was reached: what it does is its answer.
    next = Next::answered;
    Frame reply;
    for (;;) {
        Frame f;
        switch (read_frame(fd, deadline, f, reason)) {
            case ReadStatus::ok:
                break;
            case ReadStatus::timeout:
                return Status(
                    PMIX_ERR_TIMEOUT,
                    fmt::format("no handshake reply from {} within {} s (MCA parameter "
                                "ptl_base_connect_timeout)",
                                uri, static_cast<double>(request.per_uri.count()) / 1000));
            case ReadStatus::closed:
                return Status(PMIX_ERR_LOST_CONNECTION,
                              uri + " closed the connection before answering the handshake");
            case ReadStatus::malformed:
                return Status(PMIX_ERR_UNPACK_FAILURE,
                              fmt::format("malformed handshake reply from {}: {}", uri, reason));
        }
        if (f.is_reply() && f.tag == kHandshakeTag) {
            reply = std::move(f);
            break;
        }
        if (!f.is_reply()) out.early.push_back(std::move(f));
    }
    BodyReader r(reply.body);
    std::int32_t code = PMIX_SUCCESS;
    if (!r.i32(code) || !r.str(reason))
        return Status(PMIX_ERR_UNPACK_FAILURE, "malformed handshake reply from " + uri);
    if (code != PMIX_SUCCESS) {
        return Status(code, fmt::format("{} refused the handshake: {}", uri,
                                        reason.empty() ? "no reason given" : reason));
    }
    if (!r.proc(out.server) || (request.read_payload && !request.read_payload(r)) || !r.finished())
        return Status(PMIX_ERR_UNPACK_FAILURE, "malformed handshake reply from " + uri);
    return out;
}

}  // namespace

std::chrono::seconds connect_timeout() {
    static const std::int64_t seconds = [] {
        mca::ParamSpec spec;
        spec.name = "ptl_base_connect_timeout";
        spec.framework = "ptl";
        spec.component = "base";
        spec.type = mca::ParamType::integer;
        spec.description =
            "Seconds a client or a tool waits for one server URI to connect and answer its "
            "handshake";
        spec.default_value = "10";
        auto r = mca::ParameterRegistry::process_wide().register_param(spec);
        return r && r.value().int_value > 0 ? r.value().int_value : 10;
    }();
    return std::chrono::seconds(seconds);
}

std::vector<std::uint8_t> handshake_body(wire::Role role, const pmix_proc_t &proc,
                                         const std::string &secret,
                                         std::span<const pmix_info_t> info) {
    return BodyWriter()
        .u32(wire::kProtocolVersion)
        .u8(static_cast<std::uint8_t>(role))
        .proc(proc)
        .str(secret)
        .u32(static_cast<std::uint32_t>(getuid()))
        .u32(static_cast<std::uint32_t>(getgid()))
        .u32(static_cast<std::uint32_t>(getpid()))
        .infos(info.data(), info.size())
        .take();
}

mca::Result<Handshaken> handshake(const ptl_base::Transports &transports,
                                  const HandshakeRequest &request) {
    const auto targets = transports.order(request.uris);
    if (targets.empty()) {
        return Status(
            PMIX_ERR_UNREACH,
            fmt::format("none of the server URIs [{}] is handled by a selected "
                        "transport ({})",
                        fmt::join(request.uris, ", "), fmt::join(transports.names(), ",")));
    }
    bool hook_ran = false;
    std::string failures;
    Status last;
    for (const auto &t : targets) {
        Next next = Next::try_next;
        auto result = attempt(t, request, hook_ran, next);
        if (result) return result;
        last = result.status();
        if (next == Next::abort) return last;
        failures += (failures.empty() ? "" : "; ") + last.message();
        if (next == Next::answered && request.search == Search::first_server) break;
    }
    return Status(last.code(), failures);
}

}  // namespace pmixpp::client
