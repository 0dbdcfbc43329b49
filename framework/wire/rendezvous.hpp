// Rendezvous files: how a tool finds the PMIx servers of its node without
// being given a URI (docs/tools.md, "Rendezvous files"; the standard's
// Chap_API_Tools, "Rendezvousing with a local server").
//
// A server writes, after its listeners are open (server/rendezvous.cpp):
//   - with PMIX_SERVER_SYSTEM_SUPPORT, the node's one system file
//       <system tmpdir>/pmixpp.sys.<hostname>
//   - with PMIX_SERVER_SESSION_SUPPORT or PMIX_SERVER_TOOL_SUPPORT, two
//     session files, tagged with its pid and with its namespace:
//       <server tmpdir>/pmixpp.<hostname>.tool.<pid>
//       <server tmpdir>/pmixpp.<hostname>.tool.<nspace>
// Each file is text, one "key=value" per line:
//   pmixpp-rendezvous=1
//   nspace=<server nspace>
//   rank=<server rank>
//   pid=<server pid>
//   uri=<uri>            one line per listener, every selected transport,
//                        in the order a tool should try them
// The `pmixpp.` prefix (not the standard's `pmix.`) keeps OpenPMIx tools,
// which do not speak our wire protocol, away from our servers.
//
// Shared by the server (writes) and the tool (reads): both faces sit above
// this layer. Any thread; plain POSIX I/O.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pmixpp::wire {

struct Rendezvous {
    std::string nspace;
    std::uint32_t rank = 0;
    pid_t pid = 0;
    std::vector<std::string> uris;
    std::string path;  // where it was read from (reading only)
};

// This host's name as the file names use it ("localhost" if unknown).
std::string rendezvous_hostname();
std::string system_rendezvous_name();                         // pmixpp.sys.<host>
std::string session_rendezvous_prefix();                      // pmixpp.<host>.tool.
std::string session_rendezvous_name(const std::string &tag);  // prefix + tag

// The text of a file (above).
std::string format_rendezvous(const Rendezvous &r);
// Parses a file's text. Also accepts what a user may write into a
// PMIX_TOOL_ATTACHMENT_FILE: bare URI lines, or "nspace.rank;uri" lines (the
// PMIX_SERVER_URI* form). nullopt when no URI is in it.
std::optional<Rendezvous> parse_rendezvous(const std::string &text);
// Reads and parses `path`; nullopt when unreadable or without a URI.
std::optional<Rendezvous> read_rendezvous(const std::string &path);

// Whether process `pid` exists (kill(pid, 0); EPERM counts as alive).
bool process_alive(pid_t pid);

// Writes `text` to `path` atomically (a temporary file renamed over it) with
// `mode`. Empty string on success, else the reason.
std::string write_file_atomically(const std::string &path, const std::string &text, unsigned mode);

// Creates `path`, complete, only if it does not exist (a temporary file
// hard-linked to it) with `mode`: the system file's "one per node". Returns 0
// on success, else errno (EEXIST: someone else's file is there).
int create_exclusively(const std::string &path, const std::string &text, unsigned mode);

// Removes the session files in `dir` (both tags) of servers whose pid no
// longer runs (killed ones leave theirs). Only files this user may remove go.
// Returns how many were removed.
std::size_t remove_stale_session_files(const std::string &dir);

// The session files of live servers in `dir` (pid-tagged files only, so
// that each server is listed once), sorted by pid. A file whose pid does
// not run is skipped.
std::vector<Rendezvous> list_session_servers(const std::string &dir);

}  // namespace pmixpp::wire
