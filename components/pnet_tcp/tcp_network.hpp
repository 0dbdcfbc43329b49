// The pnet_tcp module (README.md): ports from a pool, per process, and a key
// per job.
#pragma once

#include "pmixpp/mca/pnet.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pmixpp::pnet_tcp {

struct Settings {
    std::uint32_t first_port = 32000;  // the pool: [first_port, last_port]
    std::uint32_t last_port = 32100;
    std::string port_env = "OMPI_MCA_btl_tcp_port_min_v4";
    std::string range_env = "OMPI_MCA_btl_tcp_port_range_v4";
    std::string key_env = "PMIX_FABRIC_SEC_KEY";
    std::string if_env = "OMPI_MCA_btl_tcp_if_include";  // the interface, when known
};

// Parses "FIRST-LAST" (1..65535, FIRST <= LAST); false when malformed.
bool parse_pool(const std::string &text, std::uint32_t &first, std::uint32_t &last);

// Launch-info keys setup_application emits and setup_local_support reads.
inline constexpr const char *kKeyId = "pmix.pnet.tcp.id";
inline constexpr const char *kKeyEndpoints = "pmix.pnet.tcp.endpts";
inline constexpr const char *kKeySecret = "pmix.pnet.tcp.key";
// Planned at setup_application (the job's node and proc maps given): each
// node as "name|interface|address" ("name||" when its interface is unknown),
// ';'-separated in node-map order; each node's ranks and their first ports as
// runs "FIRST-LAST@PORT" (rank FIRST+k has PORT+k*endpoints), ','-separated,
// the nodes ';'-separated in the same order.
inline constexpr const char *kKeyNodes = "pmix.pnet.tcp.nodes";
inline constexpr const char *kKeyPorts = "pmix.pnet.tcp.ports";
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
    mca::Status job_info(std::string_view nspace, const mca::KeyValueSink &info) override;

  private:
    // A node's interface for a job: its name and the address its processes
    // listen on; both empty when the node's inventory is unknown (then the
    // node's name stands for the address).
    struct Where {
        std::string node, interface, address;
    };
    struct Device {  // an interface of a node, as an inventory tells it
        std::string name;
        std::vector<std::string> addresses, networks;  // parallel: "a/p" and "net/p"
    };
    using Pool = std::vector<bool>;  // index: port - first_port

    struct Job {
        std::string id;
        std::uint32_t endpoints = 1;  // ports per process
        std::string key;
        std::map<pmix_rank_t, std::uint32_t> first_port;  // per process (planned: every rank)
        bool planned = false;                             // ports from setup_application
        std::vector<Where> nodes;                         // planned: node-map order
        std::map<pmix_rank_t, std::uint32_t> node_of;     // planned: index into nodes
    };
    // What setup_application took from the pools for a job (this server plans it).
    struct Plan {
        std::uint32_t endpoints = 1;
        std::vector<std::pair<std::string, std::uint32_t>> taken;  // node, first port
    };
    // First port of `count` free consecutive ports of `pool`, marked used; 0 if none.
    std::uint32_t take(Pool &pool, std::uint32_t count);
    void give_back(Pool &pool, std::uint32_t first, std::uint32_t count);
    // This node's pool (setup_fork without a plan, and a plan for this node),
    // or another node's as this server plans it.
    Pool &pool_of(const std::string &node);
    bool is_this_node(const std::string &node) const;
    // The node's interfaces: the inventory delivered for it, or this node's own.
    std::optional<std::vector<Device>> devices_of(const std::string &node) const;
    // Where `node`'s processes listen: the interface on `plane` (an IP network,
    // "192.0.2.0/24") or, without a plane, its first interface.
    mca::Result<Where> choose(const std::string &node, const std::string &plane) const;
    // The plan of a job whose info has PMIX_NODE_MAP and PMIX_PROC_MAP: every
    // rank's ports on its node, emitted as kKeyNodes / kKeyPorts.
    mca::Status plan(std::string_view nspace, std::span<const pmix_info_t> job_info,
                     std::uint32_t endpoints, const std::string &plane,
                     const mca::KeyValueSink &launch_info);
    mca::Status read_plan(std::string_view nspace, const pmix_info_t &nodes,
                          const pmix_info_t &ports, Job &job) const;

    Settings settings_;
    Pool used_;                                        // this node's pool
    std::map<std::string, Pool, std::less<>> remote_;  // other nodes' pools, as planned here
    std::map<std::string, Job, std::less<>> jobs_;     // set up on this node
    std::map<std::string, Plan, std::less<>> plans_;   // planned by this server
    std::map<std::string, std::vector<Device>, std::less<>> delivered_;  // per node
    std::set<std::string, std::less<>> names_;  // what collect_inventory called this node
};

}  // namespace pmixpp::pnet_tcp
