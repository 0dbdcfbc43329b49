// The flags byte of a commit (Command::commit, wire/protocol.hpp): after the
// LOCAL and REMOTE blobs; absent from the commits of a client older than it.
//   bytes local, bytes remote[, u8 flags[, bytes global (kCommitGlobal)]]
#pragma once

#include <cstdint>

namespace pmixpp::wire {

// The blobs are everything the client committed, not only what changed since
// its previous commit: the server replaces what it keeps of that client
// instead of appending (server/modex.hpp).
inline constexpr std::uint8_t kCommitWhole = 1;
// The body goes on with a third blob, the GLOBAL values, sent once: the LOCAL
// and REMOTE blobs before it then hold only the values put with exactly that
// scope, and each part is that blob followed by the GLOBAL one.
inline constexpr std::uint8_t kCommitGlobal = 2;
inline constexpr std::uint8_t kCommitKnownFlags = kCommitWhole | kCommitGlobal;

}  // namespace pmixpp::wire
