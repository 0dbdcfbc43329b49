// IO forwarding on the server side (docs/iof.md): clients' and tools' pulls,
// the host's output (PMIx_server_IOF_deliver) routed to the matching pulls or
// cached, and the host's iof_pull / push_stdin upcalls. Progress thread only.
//
// The cache holds output no pull wanted, oldest first, up to a byte limit per
// channel: the MCA parameter server_base_iof_cache_size (default 1 MiB), or
// what the last pull naming that channel asked for (PMIX_IOF_CACHE_SIZE).
// Overflow drops the newest bytes (standard default) or, after
// PMIX_IOF_DROP_OLDEST, the oldest. A new pull receives, in order, the cached
// output it matches, which then leaves the cache.
#include <algorithm>
#include <optional>

#include "event/event.hpp"
#include "mca/logging.hpp"
#include "server/iof_router.hpp"
#include "server/upcall_results.hpp"
#include "server/upcalls.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

#include <pmixpp/mca/parameters.hpp>

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

constexpr std::uint64_t kDefaultCacheSize = 1024 * 1024;

std::uint64_t default_cache_size() {
    static const std::uint64_t size = [] {
        mca::ParamSpec spec;
        spec.name = "server_base_iof_cache_size";
        spec.framework = "server";
        spec.component = "base";
        spec.type = mca::ParamType::size;
        spec.description =
            "Bytes of forwarded output (PMIx_server_IOF_deliver) the server keeps per channel "
            "for processes nobody pulls yet; a pull's PMIX_IOF_CACHE_SIZE overrides it";
        spec.default_value = std::to_string(kDefaultCacheSize);
        auto result = mca::ParameterRegistry::process_wide().register_param(spec);
        return result ? result.value().size_value : kDefaultCacheSize;
    }();
    return size;
}

template <class Pull>
bool wants(const Pull &pull, const pmix_proc_t &source, pmix_iof_channel_t channel) {
    return (pull.channels & channel) != 0 &&
           std::any_of(pull.procs.begin(), pull.procs.end(),
                       [&](const pmix_proc_t &p) { return events::proc_matches(p, source); });
}

template <class Chunk>
bool send_chunk(Channel &ch, std::uint64_t id, const Chunk &c) {
    const auto body = BodyWriter()
                          .u64(id)
                          .proc(c.source)
                          .u32(c.channel)
                          .bytes(std::span<const std::uint8_t>(c.bytes))
                          .infos(c.info ? c.info->data() : nullptr, c.info ? c.info->size() : 0)
                          .take();
    return ch.send(static_cast<std::uint16_t>(wire::Command::iof), 0, 0, body);
}

}  // namespace

IofRouter::IofRouter(ClientTable &clients, const HostUpcalls &host, RequestTable &requests)
    : clients_(clients), host_(host) {
    requests.add(wire::Command::iof_pull, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_pull(ch, frame, client);
    });
    requests.add(wire::Command::iof_deregister,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_deregister(ch, frame, client);
                 });
    requests.add(wire::Command::iof_push, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_push(ch, frame, client);
    });
}

void IofRouter::clear() {
    pulls_.clear();
    cache_.clear();
    cached_bytes_.clear();
    policy_.clear();
}

// ---------------------------------------------------------------------------------------------
// output from the host

void IofRouter::deliver(const pmix_proc_t &source, pmix_iof_channel_t channel,
                        std::vector<std::uint8_t> bytes, std::shared_ptr<wire::InfoArray> info) {
    Chunk chunk{source, channel, std::move(bytes), std::move(info)};
    bool sent = false;
    for (const auto &[key, pulls] : pulls_) {
        ClientRecord *c = clients_.find_client(key);
        if (c == nullptr || !c->channel) continue;
        for (const auto &[id, pull] : pulls) {
            if (wants(pull, source, channel) && send_chunk(*c->channel, id, chunk)) sent = true;
        }
    }
    if (sent) return;
    cached_bytes_[channel] += chunk.bytes.size();
    cache_.push_back(std::move(chunk));
    trim_cache(channel);
}

IofRouter::CachePolicy IofRouter::policy_of(pmix_iof_channel_t channel) const {
    auto it = policy_.find(channel);
    return it != policy_.end() ? it->second : CachePolicy{default_cache_size(), false};
}

void IofRouter::trim_cache(pmix_iof_channel_t channel) {
    const CachePolicy policy = policy_of(channel);
    std::uint64_t &held = cached_bytes_[channel];
    auto of_channel = [channel](const Chunk &c) { return c.channel == channel; };
    while (held > policy.size) {
        const std::uint64_t excess = held - policy.size;
        auto it = cache_.end();
        if (policy.drop_oldest) {
            it = std::find_if(cache_.begin(), cache_.end(), of_channel);
        } else if (auto r = std::find_if(cache_.rbegin(), cache_.rend(), of_channel);
                   r != cache_.rend()) {
            it = std::prev(r.base());
        }
        if (it == cache_.end()) break;
        auto &b = it->bytes;
        if (b.size() <= excess) {
            held -= b.size();
            cache_.erase(it);
        } else if (policy.drop_oldest) {
            b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(excess));
            held -= excess;
        } else {
            b.resize(b.size() - excess);
            held -= excess;
        }
    }
}

void IofRouter::replay(const ProcKey &client, std::uint64_t id) {
    ClientRecord *c = clients_.find_client(client);
    auto pulls = pulls_.find(client);
    if (c == nullptr || !c->channel || pulls == pulls_.end()) return;
    auto pull = pulls->second.find(id);
    if (pull == pulls->second.end()) return;
    for (auto it = cache_.begin(); it != cache_.end();) {
        if (!wants(pull->second, it->source, it->channel)) {
            ++it;
            continue;
        }
        if (!send_chunk(*c->channel, id, *it)) return;
        cached_bytes_[it->channel] -= it->bytes.size();
        it = cache_.erase(it);
    }
}

void IofRouter::client_departed(const ProcKey &client, Departure) {
    pulls_.erase(client);
}

void IofRouter::job_deregistered(const std::string &nspace) {
    std::erase_if(pulls_, [&](const auto &e) { return e.first.first == nspace; });
}

// ---------------------------------------------------------------------------------------------
// requests from clients and tools

void IofRouter::handle_pull(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint64_t id = 0;
    std::uint32_t channels = 0;
    Pull pull;
    wire::InfoArray directives;
    r.u64(id);
    r.procs(pull.procs);
    r.u32(channels);
    r.infos(directives);
    if (!r.finished() || client == nullptr || pull.procs.empty() || channels == 0 ||
        channels > 0xffff) {
        ch.close("malformed iof_pull request");
        return;
    }
    pull.channels = static_cast<pmix_iof_channel_t>(channels);
    const auto reply = PendingReply::to(ch, frame);
    // The cache policy asked for (required attributes of PMIx_IOF_pull).
    std::optional<std::uint64_t> size;
    std::optional<bool> drop_oldest;
    for (const auto &d : directives.span()) {
        if (PMIX_CHECK_KEY(&d, PMIX_IOF_CACHE_SIZE)) {
            size = wire::as_uint(d.value);
            if (!size) {
                send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
                return;
            }
        } else if (PMIX_CHECK_KEY(&d, PMIX_IOF_DROP_OLDEST)) {
            drop_oldest = events::info_true(d);
        } else if (PMIX_CHECK_KEY(&d, PMIX_IOF_DROP_NEWEST)) {
            drop_oldest = !events::info_true(d);
        }
    }
    const ProcKey key = key_of(client->proc);
    auto finish = [this, reply, key, id, pull, size, drop_oldest](pmix_status_t s) {
        auto live = reply.channel.lock();
        ClientRecord *c = clients_.find_client(key);
        if (!live || c == nullptr || c->channel != live) return;  // gone meanwhile
        if (s == PMIX_SUCCESS) {
            pulls_[key][id] = pull;
            for (unsigned bit = 1; bit <= 0x8000 && (size || drop_oldest); bit <<= 1) {
                const auto channel = static_cast<pmix_iof_channel_t>(bit);
                if ((pull.channels & channel) == 0) continue;
                CachePolicy p = policy_of(channel);
                if (size) p.size = *size;
                if (drop_oldest) p.drop_oldest = *drop_oldest;
                policy_[channel] = p;
                trim_cache(channel);
            }
        }
        send_reply(reply, status_body(s));
        if (s == PMIX_SUCCESS) replay(key, id);
    };
    if (host_->iof_pull == nullptr) {
        finish(PMIX_SUCCESS);
        return;
    }
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(directives.span(), static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    auto procs = std::make_shared<std::vector<pmix_proc_t>>(pull.procs);
    call_host_op(
        [this, procs, args, channels = pull.channels](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->iof_pull(procs->data(), procs->size(), args->data(), args->size(),
                                   channels, cb, cbdata);
        },
        [finish, procs, args](pmix_status_t s) { finish(s); });
}

void IofRouter::handle_deregister(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint64_t id = 0;
    wire::InfoArray directives;
    r.u64(id);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed iof_deregister request");
        return;
    }
    auto it = pulls_.find(key_of(client->proc));
    const bool found = it != pulls_.end() && it->second.erase(id) != 0;
    if (found && it->second.empty()) pulls_.erase(it);
    send_reply(PendingReply::to(ch, frame), status_body(found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND));
}

void IofRouter::handle_push(Channel &ch, Frame &frame, ClientRecord *client) {
    // What the host's push_stdin sees stays valid until it called back.
    struct Push {
        std::vector<pmix_proc_t> targets;
        std::vector<std::uint8_t> bytes;
        pmix_byte_object_t bo{};
        HostInfo directives;
    };
    auto push = std::make_shared<Push>();
    BodyReader r(frame.body);
    wire::InfoArray directives;
    r.procs(push->targets);
    r.bytes(push->bytes);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed iof_push request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (host_->push_stdin == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    // End of stream (PMIX_IOF_COMPLETE, no payload): an empty byte object.
    if (!push->bytes.empty()) push->bo.bytes = reinterpret_cast<char *>(push->bytes.data());
    push->bo.size = push->bytes.size();
    push->directives.add_copies_as(directives.span(), static_cast<std::uint32_t>(client->uid),
                                   static_cast<std::uint32_t>(client->gid));
    const pmix_proc_t source = client->proc;
    call_host_op(
        [this, source, push](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->push_stdin(&source,
                                     push->targets.empty() ? nullptr : push->targets.data(),
                                     push->targets.size(), push->directives.data(),
                                     push->directives.size(), &push->bo, cb, cbdata);
        },
        [reply, push](pmix_status_t s) { send_reply(reply, status_body(s)); });
}

}  // namespace pmixpp::server
