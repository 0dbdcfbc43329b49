// The flags byte of a commit (Command::commit, wire/protocol.hpp): after the
// LOCAL and REMOTE blobs; absent from the commits of a client older than it.
//   bytes local, bytes remote[, u8 flags[, bytes global (kCommitGlobal)]
//   [, u32 count (kCommitCount)]]
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
// The body ends with a u32: the commits this frame stands for (at least 1;
// absent: 1). A client that fences through its fence area holds back a
// `whole` commit and sends only the last of a run of them (client/README.md,
// "Commits held back"): the server counts them all (its commits_received
// meets the fence segment's count) and keeps only what this one holds.
inline constexpr std::uint8_t kCommitCount = 4;
inline constexpr std::uint8_t kCommitKnownFlags = kCommitWhole | kCommitGlobal | kCommitCount;

}  // namespace pmixpp::wire
