// libFuzzer target: the frame decoder (wire/frame.hpp) as Channel::read_frames
// runs it on a connection's byte stream: header, check against the limits,
// then open_frame (which inflates a compressed body). Every frame that opens is
// then read as a modex record stream and as an info list, the two generic
// bodies a peer sends most.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "wire/frame.hpp"
#include "wire/message.hpp"

using namespace pmixpp::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    FrameLimits limits;
    limits.max_frame = 1u << 20;  // small enough that inflating stays fast
    limits.compress_threshold = 64;
    std::size_t pos = 0;
    while (size - pos >= kFrameHeaderSize) {
        const FrameHeader header = decode_header(data + pos);
        if (!check_header(header, limits).empty()) return 0;
        if (size - pos - kFrameHeaderSize < header.length) return 0;
        pos += kFrameHeaderSize;
        std::vector<std::uint8_t> payload(data + pos, data + pos + header.length);
        pos += header.length;
        Frame frame;
        std::string reason;
        if (!open_frame(header, std::move(payload), limits, frame, reason)) return 0;
        if (frame.body.size() > limits.max_frame) std::abort();
        if ((frame.flags & kFlagCompressed) != 0) std::abort();
        // Re-framing what opened must open to the same body.
        std::vector<std::uint8_t> out;
        if (!build_frame(frame.command, frame.tag, frame.flags, frame.body, limits, out, reason))
            std::abort();
        Frame back;
        const FrameHeader h2 = decode_header(out.data());
        if (!check_header(h2, limits).empty()) std::abort();
        if (!open_frame(h2, std::vector<std::uint8_t>(out.begin() + kFrameHeaderSize, out.end()),
                        limits, back, reason) ||
            back.body != frame.body || back.command != frame.command || back.tag != frame.tag)
            std::abort();

        std::vector<ModexRecord> records;
        (void)parse_records(frame.body, records);
        BodyReader r(frame.body);
        InfoArray info;
        (void)r.infos(info);
    }
    return 0;
}
