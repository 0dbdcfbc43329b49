// Who is at the other end of a connection, as the OS says, for transports
// whose kernel hands no credentials with the connection (TCP). Used by the
// client and the tool handshakes (docs/security.md). Progress thread (any
// thread would do: nothing is kept).
#pragma once

#include <sys/types.h>

#include <optional>

namespace pmixpp::server {

// The uid owning the other end of the TCP connection `fd` when the peer runs
// on this host, from the kernel's socket table (/proc/net/tcp{,6}): the
// peer's socket is the one whose local end is our remote end and whose
// remote end is our local end. nullopt when the peer is not on this host, the
// socket is not TCP, or the table cannot be read.
std::optional<uid_t> tcp_peer_uid(int fd);

}  // namespace pmixpp::server
