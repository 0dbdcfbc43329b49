// The PMIx Standard ABI versions this library implements (spec,
// Chap_Introduction "PMIx ABI Versioning": "MAJOR.MINOR", a comma-separated
// list when several): what PMIx_Query_info answers, locally and even before
// any init, for PMIX_QUERY_STABLE_ABI_VERSION / _PROVISIONAL_ABI_VERSION
// (client/query.cpp). OpenPMIx 4.2.2, whose ABI libpmix.so.2 follows,
// reports "0.0" for both (its version string: "Stable ABI: 0.0, Provisional
// ABI: 0.0"); its public pmix_version.h defines no macro for them, and
// neither does ours.
#pragma once

namespace pmixpp::runtime {

inline constexpr const char *kStdAbiStableVersion = "0.0";
inline constexpr const char *kStdAbiProvisionalVersion = "0.0";

}  // namespace pmixpp::runtime
