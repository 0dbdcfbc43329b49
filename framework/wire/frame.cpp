#include "wire/frame.hpp"

#include <algorithm>

#include <spdlog/fmt/fmt.h>

#include "pmixpp/mca/parameters.hpp"
#include "wire/compress.hpp"

namespace pmixpp::wire {

namespace {
std::uint64_t size_param(const char *name, const char *description, const char *default_text) {
    mca::ParamSpec spec;
    spec.name = name;
    spec.framework = "wire";
    spec.component = "base";
    spec.type = mca::ParamType::size;
    spec.description = description;
    spec.default_value = default_text;
    auto result = mca::ParameterRegistry::process_wide().register_param(spec);
    if (!result) return 0;
    return result.value().size_value;
}

void put_le(std::uint8_t *p, std::uint64_t x, int width) {
    for (int i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(x >> (8 * i));
}
std::uint64_t get_le(const std::uint8_t *p, int width) {
    std::uint64_t x = 0;
    for (int i = 0; i < width; ++i) x |= std::uint64_t{p[i]} << (8 * i);
    return x;
}
}  // namespace

const FrameLimits &FrameLimits::process_wide() {
    static const FrameLimits limits = [] {
        FrameLimits l;
        l.compress_threshold = size_param(
            "wire_base_compress_threshold",
            "Message bodies larger than this many bytes are zlib-compressed (0: never)", "64k");
        std::uint64_t max = size_param("wire_base_max_frame_size",
                                       "Largest message body accepted from or sent to a peer; a "
                                       "peer announcing more is disconnected",
                                       "256M");
        if (max == 0 || max > 0xFFFFFFFFull) max = 0xFFFFFFFFull;
        l.max_frame = static_cast<std::size_t>(max);
        l.max_inflated = l.max_frame;
        return l;
    }();
    return limits;
}

const FrameLimits &FrameLimits::before_handshake() {
    static const FrameLimits limits = [] {
        FrameLimits l = process_wide();
        const auto bounded = [&](std::uint64_t v) {
            return static_cast<std::size_t>(v == 0 ? l.max_frame
                                                   : std::min<std::uint64_t>(v, l.max_frame));
        };
        l.max_frame = bounded(size_param(
            "wire_base_max_handshake_frame",
            "Largest frame (as sent) accepted from a peer before its handshake succeeded; a "
            "peer announcing more is disconnected before anything is buffered",
            "1M"));
        l.max_inflated = bounded(
            size_param("wire_base_max_handshake_inflated",
                       "Largest size a compressed frame may inflate to before the peer's handshake "
                       "succeeded; a peer declaring more is disconnected without inflating",
                       "1M"));
        return l;
    }();
    return limits;
}

void encode_header(const FrameHeader &h, std::uint8_t out[kFrameHeaderSize]) noexcept {
    out[0] = h.version;
    out[1] = h.flags;
    put_le(out + 2, h.command, 2);
    put_le(out + 4, h.tag, 4);
    put_le(out + 8, h.length, 4);
}

FrameHeader decode_header(const std::uint8_t in[kFrameHeaderSize]) noexcept {
    FrameHeader h;
    h.version = in[0];
    h.flags = in[1];
    h.command = static_cast<std::uint16_t>(get_le(in + 2, 2));
    h.tag = static_cast<std::uint32_t>(get_le(in + 4, 4));
    h.length = static_cast<std::uint32_t>(get_le(in + 8, 4));
    return h;
}

std::string check_header(const FrameHeader &h, const FrameLimits &limits) {
    if (h.version != kFrameVersion) {
        return fmt::format("frame version {}, expected {}", h.version, kFrameVersion);
    }
    if ((h.flags & ~kKnownFlags) != 0) return fmt::format("unknown frame flags 0x{:02x}", h.flags);
    if (h.length > limits.max_frame) {
        return fmt::format("frame of {} bytes exceeds the limit ({})", h.length, limits.max_frame);
    }
    return {};
}

bool prepare_frame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                   std::span<const std::uint8_t> body, const FrameLimits &limits,
                   PeerPlacement peer, std::uint8_t header[kFrameHeaderSize],
                   std::vector<std::uint8_t> &packed, std::span<const std::uint8_t> &payload,
                   std::string &reason) {
    payload = body;
    flags &= static_cast<std::uint8_t>(~kFlagCompressed);
    if (peer == PeerPlacement::maybe_remote && limits.compress_threshold > 0 &&
        body.size() > limits.compress_threshold && compress(body, packed)) {
        payload = packed;
        flags |= kFlagCompressed;
    }
    if (payload.size() > limits.max_frame || body.size() > limits.max_frame) {
        reason = fmt::format("message of {} bytes exceeds wire_base_max_frame_size ({})",
                             body.size(), limits.max_frame);
        return false;
    }
    FrameHeader h;
    h.flags = flags;
    h.command = command;
    h.tag = tag;
    h.length = static_cast<std::uint32_t>(payload.size());
    encode_header(h, header);
    return true;
}

bool build_frame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                 std::span<const std::uint8_t> body, const FrameLimits &limits,
                 std::vector<std::uint8_t> &out, std::string &reason, PeerPlacement peer) {
    std::uint8_t header[kFrameHeaderSize];
    std::vector<std::uint8_t> packed;
    std::span<const std::uint8_t> payload;
    if (!prepare_frame(command, tag, flags, body, limits, peer, header, packed, payload, reason))
        return false;
    out.resize(kFrameHeaderSize + payload.size());
    std::copy(header, header + kFrameHeaderSize, out.begin());
    std::copy(payload.begin(), payload.end(), out.begin() + kFrameHeaderSize);
    return true;
}

bool open_frame(const FrameHeader &header, std::vector<std::uint8_t> payload,
                const FrameLimits &limits, Frame &out, std::string &reason) {
    out.command = header.command;
    out.tag = header.tag;
    out.flags = static_cast<std::uint8_t>(header.flags & ~kFlagCompressed);
    if ((header.flags & kFlagCompressed) == 0) {
        out.body = std::move(payload);
        return true;
    }
    if (payload.size() < 8) {
        reason = "compressed frame shorter than its size field";
        return false;
    }
    const std::uint64_t declared = get_le(payload.data(), 8);
    if (declared > limits.max_inflated) {
        reason = fmt::format("compressed frame inflates to {} bytes, over the limit ({})", declared,
                             limits.max_inflated);
        return false;
    }
    if (!decompress(payload, out.body)) {
        reason = "compressed frame is corrupt";
        return false;
    }
    return true;
}

}  // namespace pmixpp::wire
