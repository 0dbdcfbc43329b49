// Message framing on a stream socket (DESIGN.md §4, "Wire").
//
// A frame is a 12-byte header followed by `length` body bytes:
//
//   offset 0  u8   version   kFrameVersion; anything else closes the connection
//   offset 1  u8   flags     kFlagCompressed | kFlagReply; unknown bits are refused
//   offset 2  u16  command   wire::Command (protocol.hpp)
//   offset 4  u32  tag       request id chosen by the requester, echoed in the reply
//   offset 8  u32  length    body bytes that follow, <= wire_base_max_frame_size
//
// all little-endian. The body is a codec buffer (message.hpp). When the body is
// larger than wire_base_compress_threshold and zlib shrinks it, it is sent as
// a compress() block (u64 original size + zlib stream) and kFlagCompressed is
// set; the receiver checks the declared original size against the same
// maximum before it inflates anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pmixpp::wire {

inline constexpr std::uint8_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeaderSize = 12;
inline constexpr std::uint8_t kFlagCompressed = 0x01;
inline constexpr std::uint8_t kFlagReply = 0x02;
inline constexpr std::uint8_t kKnownFlags = kFlagCompressed | kFlagReply;

struct FrameHeader {
    std::uint8_t version = kFrameVersion;
    std::uint8_t flags = 0;
    std::uint16_t command = 0;
    std::uint32_t tag = 0;
    std::uint32_t length = 0;
};

// A received frame with its body already inflated.
struct Frame {
    std::uint16_t command = 0;
    std::uint32_t tag = 0;
    std::uint8_t flags = 0;  // kFlagReply; kFlagCompressed is cleared once inflated
    std::vector<std::uint8_t> body;
    bool is_reply() const noexcept { return (flags & kFlagReply) != 0; }
};

// The wire parameters, registered on first use through the MCA parameter
// system: wire_base_compress_threshold (size, default 64k; 0 = never
// compress) and wire_base_max_frame_size (size, default 256M; at most 4G-1)
// bound every frame; a compressed body may inflate to max_inflated (the same).
// Before a peer has authenticated (the server's side of a connection until
// its handshake succeeded) tighter ones hold (docs/security.md):
// wire_base_max_handshake_frame (default 1M) bounds the frame as sent and
// wire_base_max_handshake_inflated (default 1M) what it may inflate to, both
// checked on the header and the declared size, before anything is buffered
// or inflated.
struct FrameLimits {
    std::size_t compress_threshold = 64 * 1024;
    std::size_t max_frame = 256u * 1024 * 1024;
    std::size_t max_inflated = 256u * 1024 * 1024;
    static const FrameLimits &process_wide();
    static const FrameLimits &before_handshake();
};

void encode_header(const FrameHeader &header, std::uint8_t out[kFrameHeaderSize]) noexcept;
FrameHeader decode_header(const std::uint8_t in[kFrameHeaderSize]) noexcept;

// Why a header is unacceptable ("frame version 7, expected 1"), or "" when it
// is fine.
std::string check_header(const FrameHeader &header, const FrameLimits &limits);

// Whether the peer is known to run on this host (its kernel credentials came
// with the connection: AF_UNIX). Compression buys bandwidth on a network; to a
// local peer, deflating costs more than copying, so local frames never are.
enum class PeerPlacement { maybe_remote, local };

// The header for `body` and the bytes to send after it: `body` itself, or its
// compressed form held in `packed` when worth it. Fails (returns false,
// `reason` set) when the body exceeds the maximum frame size. Lets a sender
// hand header and payload to the socket buffer without joining them first.
bool prepare_frame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                   std::span<const std::uint8_t> body, const FrameLimits &limits,
                   PeerPlacement peer, std::uint8_t header[kFrameHeaderSize],
                   std::vector<std::uint8_t> &packed, std::span<const std::uint8_t> &payload,
                   std::string &reason);

// Header + body in one buffer (prepare_frame, joined).
bool build_frame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                 std::span<const std::uint8_t> body, const FrameLimits &limits,
                 std::vector<std::uint8_t> &out, std::string &reason,
                 PeerPlacement peer = PeerPlacement::maybe_remote);

// Turn a received payload into a Frame (inflating it if flagged). Returns
// false with `reason` for a corrupt or oversized compressed body.
bool open_frame(const FrameHeader &header, std::vector<std::uint8_t> payload,
                const FrameLimits &limits, Frame &out, std::string &reason);

}  // namespace pmixpp::wire
