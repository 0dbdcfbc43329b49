#include "runtime/init_state.hpp"

#include <atomic>

namespace pmixpp::runtime {
namespace {
// Written only by the init/finalize entry points; read anywhere.
std::atomic<int> g_counts[3] = {0, 0, 0};
}  // namespace

int init_count(Face face) noexcept {
    return g_counts[static_cast<int>(face)].load();
}

bool any_face_initialized() noexcept {
    return init_count(Face::client) > 0 || init_count(Face::server) > 0 ||
           init_count(Face::tool) > 0;
}

int add_init(Face face) noexcept {
    return ++g_counts[static_cast<int>(face)];
}

int drop_init(Face face) noexcept {
    auto &count = g_counts[static_cast<int>(face)];
    int current = count.load();
    while (current > 0 && !count.compare_exchange_weak(current, current - 1)) {
    }
    return current > 0 ? current - 1 : 0;
}

}  // namespace pmixpp::runtime
