// The pnet_tcp module (README.md): ports from a pool, per process, and a key
// per job.
#pragma once

#include "pmixpp/mca/pnet.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pmixpp::pnet_tcp {

struct Settings {
    std::uint32_t first_port = 32000;  // the pool: [first_port, last_port]
    std::uint32_t last_port = 32100;
    std::string port_env = "OMPI_MCA_btl_tcp_port_min_v4";
    std::string range_env = "OMPI_MCA_btl_tcp_port_range_v4";
    std::string key_env = "PMIX_FABRIC_SEC_KEY";
};

// Parses "FIRST-LAST" (1..65535, FIRST <= LAST); false when malformed.
bool parse_pool(const std::string &text, std::uint32_t &first, std::uint32_t &last);

// Launch-info keys setup_application emits and setup_local_support reads.
inline constexpr const char *kKeyId = "pmix.pnet.tcp.id";
inline constexpr const char *kKeyEndpoints = "pmix.pnet.tcp.endpts";
inline constexpr const char *kKeySecret = "pmix.pnet.tcp.key";
// Inventory: a device's IP addresses, comma-separated "address/prefix".
inline constexpr const char *kKeyAddresses = "pmix.pnet.tcp.addrs";

class TcpNetwork final : public mca::pnet::Module {
  public:
    explicit TcpNetwork(Settings settings);

    mca::Status setup_application(std::string_view nspace, std::span<const pmix_info_t> job_info,
                                  const mca::KeyValueSink &launch_info) override;
    mca::Status setup_local_support(std::string_view nspace,
                                    std::span<const pmix_info_t> launch_info) override;
    mca::Status setup_fork(const pmix_proc_t &child, mca::Environment &env) override;
    void deregister_job(std::string_view nspace) override;
    mca::Status collect_inventory(std::span<const pmix_info_t> directives,
                                  const mca::KeyValueSink &inventory) override;
    mca::Status deliver_inventory(std::span<const pmix_info_t> inventory,
                                  std::span<const pmix_info_t> directives) override;

  private:
    struct Job {
        std::string id;
        std::uint32_t endpoints = 1;  // ports per process
        std::string key;
        std::map<pmix_rank_t, std::uint32_t> first_port;  // per local process
    };
    // First port of `count` free consecutive ports, marked used; 0 if none.
    std::uint32_t take(std::uint32_t count);
    void give_back(std::uint32_t first, std::uint32_t count);

    Settings settings_;
    std::vector<bool> used_;  // index: port - first_port
    std::map<std::string, Job, std::less<>> jobs_;
};

}  // namespace pmixpp::pnet_tcp
