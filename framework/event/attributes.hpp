// Event attributes that the PMIx 4.2 headers do not define but the event RFCs
// do (docs/events.md says which way each difference between the RFCs and the
// standard went). C programs use the strings.
#pragma once

namespace pmixpp::events {

// RFC 0000: register for job-specific events only (bool).
inline constexpr const char *kJobLevel = "pmix.evjob";
// RFC 0000: register for environment events only (bool).
inline constexpr const char *kEnviroLevel = "pmix.evenv";
// RFC 0000 ("PMIx_server_cache_size"): events the server caches, given to
// PMIx_server_init (uint32, uint64, size or non-negative int).
inline constexpr const char *kServerCacheSize = "pmix.evcache.size";

}  // namespace pmixpp::events
