// ComponentRepository's private state, shared by repository.cpp (scan, check)
// and selection.cpp (register, query, rank, create).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pmixpp/mca/repository.hpp"

namespace pmixpp::mca {

struct ComponentRepository::Impl {
    Impl(ParameterRegistry &params, RepositoryOptions options);

    ParameterRegistry &params;
    RepositoryOptions options;
    std::atomic<bool> log_problems{true};
    std::mutex mutex;  // guards everything below
    bool scanned = false;
    std::vector<ComponentRecord> records;  // passed the checks, in scan order
    std::vector<LoadFailure> failures;
    // Parameter handles given to components, by "<fw>_<comp>"; stable addresses.
    std::map<std::string, std::unique_ptr<ComponentParameters>, std::less<>> component_params;
    std::set<std::string, std::less<>> registration_failed;

    const FrameworkInfo *find_framework(std::string_view name) const;
    const ComponentRecord *find_record(std::string_view fw, std::string_view comp) const;
    void record_failure(LoadFailure failure);
    std::optional<LoadFailure> check_descriptor(const pmixpp_mca_component_t &d,
                                                const std::string &fw, const std::string &comp,
                                                const std::string &path) const;
    void add_checked(const pmixpp_mca_component_t &d, std::string fw, std::string comp,
                     std::string path, std::shared_ptr<const void> library);
    void scan_file(const std::filesystem::path &file);
    void scan_locked();
    std::string search_path_text() const;

    // selection.cpp
    // Registers <fw>_<comp>_priority and runs register_params once; null when
    // registration failed (recorded).
    ComponentParameters *ensure_registered(const ComponentRecord &record);
};

}  // namespace pmixpp::mca
