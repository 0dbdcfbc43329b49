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
    // Scanning is per framework: selecting one framework opens only its own
    // pmix_mca_<fw>_*.so files (a client never pays for the DSOs of frameworks
    // it does not use). The directories are listed once; every file is scanned
    // at most once, in search-path order, so duplicates are found as before.
    bool statics_added = false;
    bool listed = false;
    bool scanned_all = false;
    struct PendingFile {
        std::filesystem::path path;
        std::string framework;  // from the file name; empty: not <fw>_<comp>
        bool done = false;
    };
    std::vector<PendingFile> files;        // search-path order, sorted within a directory
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
    // Scans what `framework` needs (its static components and files); empty:
    // everything, including misnamed files and files of unknown frameworks.
    void scan_locked(std::string_view framework);
    std::string search_path_text() const;

    // selection.cpp
    // Registers <fw>_<comp>_priority and runs register_params once; null when
    // registration failed (recorded).
    ComponentParameters *ensure_registered(const ComponentRecord &record);
};

}  // namespace pmixpp::mca
