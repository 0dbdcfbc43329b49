// plog_example: a log channel that writes PMIx_Log entries with the key
// "pmixpp.example.stderr" to stderr, prefixed by the source process.
//
// Everything a component needs: the framework interface (pmixpp/mca/plog.hpp),
// the descriptor helpers (pmixpp/mca/component.hpp), one module class, and
// PMIXPP_MCA_COMPONENT() to define pmix_mca_plog_example_component.
#include <cstdio>
#include <string>

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/plog.hpp"

namespace {

constexpr const char *kChannel = "pmixpp.example.stderr";

// Set by register_params (once, before query/create, on the init thread).
std::string g_prefix = "example";

class ExampleLog final : public pmixpp::mca::plog::Module {
  public:
    std::vector<std::string> channels() const override { return {kChannel}; }

    // Runs on the progress thread; writes synchronously, so `done` is called
    // before returning.
    void log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t>, pmixpp::mca::plog::LogCompletion done) override {
        std::vector<pmixpp::mca::plog::EntryResult> statuses;
        for (const auto &e : entries) {
            if (e.value.type == PMIX_STRING && e.value.data.string != nullptr) {
                std::fprintf(stderr, "[%s %s:%u] %s\n", g_prefix.c_str(), source.nspace,
                             source.rank, e.value.data.string);
                statuses.push_back(PMIX_SUCCESS);
            } else {
                statuses.push_back(PMIX_ERR_BAD_PARAM);
            }
        }
        done(std::move(statuses));
    }
};

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = pmixpp::mca::ComponentParameters::from(handle);
    g_prefix = params.add_string("prefix", "Text put in front of every line", "example");
    return 0;
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    // Always usable: stderr exists everywhere.
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::plog::Module *>(new ExampleLog);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::plog::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 5.
PMIXPP_MCA_COMPONENT(plog, example, 1, 0, 0, 5, register_params, query, create_module,
                     destroy_module);
