// libFuzzer target: the handshake, the first body an unauthenticated peer gets
// the server to read. The server reads the request inline
// (Server::handle_handshake, server/server.cpp; Role::tool continues in
// server/tool.cpp with the same fields) with these BodyReader calls, in this
// order (wire/protocol.hpp, Command::handshake):
//   u32 protocol, u8 role, proc, str secret, u32 uid, u32 gid, u32 pid, infos
// and the client reads the reply (client/connector.cpp):
//   i32 status, str reason, proc server, then the role's payload (bytes).
// A request that decodes must encode back (BodyWriter) to bytes that decode to
// the same fields.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wire/message.hpp"

using namespace pmixpp::wire;

namespace {

struct Request {
    std::uint32_t protocol = 0, uid = 0, gid = 0, pid = 0;
    std::uint8_t role = 0;
    pmix_proc_t proc{};
    std::string secret;
    InfoArray info;
};

bool read_request(std::span<const std::uint8_t> body, Request &q) {
    BodyReader r(body);
    r.u32(q.protocol);
    r.u8(q.role);
    r.proc(q.proc);
    r.str(q.secret);
    r.u32(q.uid);
    r.u32(q.gid);
    r.u32(q.pid);
    r.infos(q.info);
    return r.finished();
}

std::vector<std::uint8_t> write_request(const Request &q) {
    BodyWriter w;
    w.u32(q.protocol).u8(q.role).proc(q.proc).str(q.secret).u32(q.uid).u32(q.gid).u32(q.pid);
    w.infos(q.info.data(), q.info.size());
    return w.take();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::span<const std::uint8_t> body(data, size);
    Request q;
    if (read_request(body, q)) {
        const std::vector<std::uint8_t> once = write_request(q);
        Request again;
        if (!read_request(once, again)) std::abort();
        if (again.protocol != q.protocol || again.role != q.role || again.uid != q.uid ||
            again.gid != q.gid || again.pid != q.pid || again.secret != q.secret ||
            again.proc.rank != q.proc.rank ||
            std::strncmp(again.proc.nspace, q.proc.nspace, PMIX_MAX_NSLEN) != 0 ||
            again.info.size() != q.info.size())
            std::abort();
        if (write_request(again) != once) std::abort();
    }

    BodyReader r(body);
    std::int32_t code = 0;
    std::string reason;
    pmix_proc_t server{};
    std::vector<std::uint8_t> payload;
    if (r.i32(code) && r.str(reason) && r.proc(server)) {
        pmix_proc_t identity{};
        BodyReader tool = r;  // Role::tool: proc the tool's identity
        (void)tool.proc(identity);
        (void)r.bytes(payload);  // Role::client: bytes job blob
        (void)r.finished();
    }
    return 0;
}
