// pmix_info: report the component model's view of this process.
//
// It builds the process-wide ComponentRepository exactly as PMIx init would
// (same search path, same parameters), runs the selection of every framework
// without creating modules, and prints what it found. Exit status: 0, or 1 on a
// bad command line.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pmix.h>

#include "pmixpp/mca/repository.hpp"

namespace mca = pmixpp::mca;

namespace {

constexpr const char *kUsage = R"(Usage: pmix_info [options]

Shows the frameworks and components of pmixpp, which components a process
would select and why, their parameters and the components that failed to load.

Options:
  (none)                 frameworks and their components
  --param <fw> [<comp>]  parameters of a framework (or one component of it);
                         "--param all" shows every parameter
  --show-failed          components that failed to load, with the reason
  --all                  everything above
  --parsable             colon-separated lines, for scripts:
                           mca:<fw>:<comp>:<field>:<value>
                           param:<fw>:<comp>:<name>:<field>:<value>
                           failed:<fw>:<comp>:<field>:<value>
  -V, --version          pmixpp's version and the version string the library
                         reports to PMIx consumers (PMIx_Get_version)
  -h, --help             this text

Components are searched in PMIX_MCA_mca_base_component_path (colon-separated;
replaces the built-in directory, "@default@" stands for it). Select components
with PMIX_MCA_<fw>=a,b (only these) or PMIX_MCA_<fw>=^a,b (all but these).
)";

struct Options {
    bool show_components = true;
    bool show_failed = false;
    bool parsable = false;
    bool all_params = false;
    std::optional<std::string> param_framework;
    std::optional<std::string> param_component;
};

// Returns the options, or nullopt after printing an error.
std::optional<Options> parse_args(int argc, char **argv) {
    Options o;
    bool only_failed_or_params = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            std::exit(0);
        } else if (a == "-V" || a == "--version") {
            std::cout << "pmix_info (pmixpp) " << PMIXPP_VERSION << "\n"
                      << "PMIx_Get_version(): " << PMIx_Get_version() << "\n";
            std::exit(0);
        } else if (a == "--parsable" || a == "--parseable") {
            o.parsable = true;
        } else if (a == "--show-failed") {
            o.show_failed = true;
            only_failed_or_params = true;
        } else if (a == "--all") {
            o.show_failed = true;
            o.all_params = true;
        } else if (a == "--param") {
            if (i + 1 >= argc || std::string_view(argv[i + 1]).substr(0, 1) == "-") {
                std::cerr << "pmix_info: --param needs a framework name (or \"all\"); see "
                             "pmix_info --help\n";
                return std::nullopt;
            }
            const std::string fw = argv[++i];
            only_failed_or_params = true;
            if (fw == "all") {
                o.all_params = true;
            } else {
                o.param_framework = fw;
            }
            if (i + 1 < argc && argv[i + 1][0] != '-') {
                const std::string comp = argv[++i];
                if (comp != "all") o.param_component = comp;
            }
        } else {
            std::cerr << "pmix_info: unknown option '" << a << "'; see pmix_info --help\n";
            return std::nullopt;
        }
    }
    bool everything = false;
    for (int i = 1; i < argc; ++i) everything |= std::string_view(argv[i]) == "--all";
    o.show_components = everything || !only_failed_or_params;
    return o;
}

std::string yes_no(bool b) {
    return b ? "yes" : "no";
}

std::string component_of(const mca::ParamInfo &p) {
    return p.spec.component.empty() ? std::string("base") : p.spec.component;
}

class Report {
  public:
    Report(mca::ComponentRepository &repo, const Options &o) : repo_(repo), o_(o) {
        for (const auto &fw : repo_.frameworks())
            selections_.emplace(fw.name, repo_.select_components(fw.name));
    }

    void print_header() const {
        if (o_.parsable) {
            std::cout << "version:pmixpp:" << PMIXPP_VERSION << "\n";
            std::cout << "path:component_path:" << join(repo_.search_path()) << "\n";
            return;
        }
        std::cout << "pmix_info: pmixpp " << PMIXPP_VERSION << " (PMIx 4.2 compatible)\n";
        std::cout << "Component search path: " << join(repo_.search_path()) << "\n";
    }

    void print_frameworks() {
        for (const auto &fw : repo_.frameworks()) {
            const auto &sel = selections_.at(fw.name);
            const auto records = repo_.components(fw.name);
            if (o_.parsable) {
                const std::string pre = "mca:framework:" + fw.name + ":";
                std::cout << pre << "interface:" << fw.interface_major << "." << fw.interface_minor
                          << "\n"
                          << pre << "policy:" << mca::to_string(fw.policy) << "\n"
                          << pre << "requires_module:" << yes_no(fw.requires_module) << "\n"
                          << pre << "components:" << records.size() << "\n";
            } else {
                std::cout << "\nFramework " << fw.name << " (interface " << fw.interface_major
                          << "." << fw.interface_minor << "; selects " << mca::to_string(fw.policy)
                          << (fw.requires_module ? "; a module is required" : "") << ")\n"
                          << "  " << fw.description << "\n";
                if (records.empty()) std::cout << "  (no component found)\n";
            }
            for (const auto &d : sel.decisions) print_decision(fw.name, d, records);
            for (const auto &w : sel.warnings) {
                if (o_.parsable)
                    std::cout << "mca:" << fw.name << "::warning:" << w << "\n";
                else
                    std::cout << "  warning: " << w << "\n";
            }
            if (sel.error) {
                if (o_.parsable)
                    std::cout << "mca:" << fw.name
                              << "::error:" << mca::to_string(sel.error->status) << ":"
                              << sel.error->message << "\n";
                else
                    std::cout << "  error: " << sel.error->message << "\n";
            }
        }
        if (!o_.parsable && !o_.show_failed) {
            const auto n = repo_.failures().size();
            if (n > 0) std::cout << "\n" << n << " load failure(s): see pmix_info --show-failed\n";
        }
    }

    void print_params() const {
        auto params = repo_.parameters().all();
        if (!o_.parsable)
            std::cout << "\nParameters"
                      << (o_.param_framework ? " of " + *o_.param_framework : std::string())
                      << (o_.param_component ? "_" + *o_.param_component : std::string()) << ":\n";
        std::size_t shown = 0;
        for (const auto &p : params) {
            if (!o_.all_params) {
                if (p.spec.framework != *o_.param_framework) continue;
                if (o_.param_component && p.spec.component != *o_.param_component) continue;
            }
            ++shown;
            if (o_.parsable) {
                const std::string pre =
                    "param:" + p.spec.framework + ":" + component_of(p) + ":" + p.spec.name + ":";
                std::cout << pre << "value:" << p.value << "\n"
                          << pre << "source:" << mca::to_string(p.source) << "\n"
                          << pre << "source_detail:" << p.source_detail << "\n"
                          << pre << "type:" << mca::to_string(p.spec.type) << "\n"
                          << pre << "default:" << p.spec.default_value << "\n"
                          << pre << "description:" << p.spec.description << "\n";
            } else {
                std::cout << "  " << p.spec.name << " = \"" << p.value << "\"  ("
                          << mca::to_string(p.spec.type) << "; from " << mca::to_string(p.source);
                if (p.source != mca::ParamSource::default_value)
                    std::cout << " " << p.source_detail << "; default \"" << p.spec.default_value
                              << "\"";
                std::cout << ")\n      " << p.spec.description << "\n";
            }
        }
        if (!o_.parsable && shown == 0) std::cout << "  (none)\n";
    }

    void print_problems() const {
        const auto problems = repo_.parameters().problems();
        if (problems.empty()) return;
        if (!o_.parsable) std::cout << "\nParameter problems:\n";
        for (const auto &p : problems) {
            if (o_.parsable)
                std::cout << "problem:" << mca::to_string(p.status) << ":" << p.message << "\n";
            else
                std::cout << "  " << p.message << "\n";
        }
    }

    void print_failures() const {
        const auto failures = repo_.failures();
        if (!o_.parsable)
            std::cout << "\nLoad failures (" << failures.size() << "):\n"
                      << (failures.empty() ? "  (none)\n" : "");
        for (const auto &f : failures) {
            if (o_.parsable) {
                const std::string pre = "failed:" + f.framework + ":" + f.component + ":";
                std::cout << pre << "stage:" << mca::to_string(f.stage) << "\n"
                          << pre << "status:" << mca::to_string(f.status) << "\n"
                          << pre << "path:" << f.path << "\n"
                          << pre << "message:" << f.message << "\n";
            } else {
                std::cout << "  " << f.framework << "_" << f.component << " ["
                          << mca::to_string(f.stage) << ", " << mca::to_string(f.status)
                          << "]\n      " << f.message << "\n";
            }
        }
    }

  private:
    static std::string join(const std::vector<std::string> &v) {
        std::string out;
        for (const auto &s : v) out += (out.empty() ? "" : ":") + s;
        return out.empty() ? "(empty)" : out;
    }

    void print_decision(const std::string &fw, const mca::ComponentDecision &d,
                        const std::vector<mca::ComponentRecord> &records) const {
        std::string version = "?", path = "?";
        for (const auto &r : records) {
            if (r.component == d.component) {
                version = r.version();
                path = r.path;
            }
        }
        if (o_.parsable) {
            const std::string pre = "mca:" + fw + ":" + d.component + ":";
            std::cout << pre << "version:" << version << "\n"
                      << pre << "path:" << path << "\n"
                      << pre << "default_priority:" << d.default_priority << "\n"
                      << pre << "priority:" << d.priority << "\n"
                      << pre << "selected:" << yes_no(d.selected) << "\n"
                      << pre << "status:" << mca::to_string(d.status) << "\n"
                      << pre << "reason:" << d.reason << "\n";
            return;
        }
        std::cout << "  " << (d.selected ? "* " : "  ") << d.component << "  version " << version
                  << "  priority " << d.priority << " (default " << d.default_priority << ")  "
                  << (d.selected ? "selected" : "not selected") << "\n"
                  << "      why:  " << d.reason << "\n"
                  << "      path: " << path << "\n";
    }

    mca::ComponentRepository &repo_;
    const Options &o_;
    std::map<std::string, mca::FrameworkSelection> selections_;
};

}  // namespace

int main(int argc, char **argv) {
    const auto options = parse_args(argc, argv);
    if (!options) return 1;
    try {
        // The report shows warnings, errors and parameter problems itself.
        mca::ParameterRegistry::process_wide().set_log_problems(false);
        auto &repo = mca::ComponentRepository::process_wide();
        repo.set_log_problems(false);
        Report report(repo, *options);
        report.print_header();
        if (options->show_components) report.print_frameworks();
        if (options->all_params || options->param_framework) report.print_params();
        report.print_problems();
        if (options->show_failed) report.print_failures();
    } catch (const std::exception &e) {
        std::cerr << "pmix_info: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
