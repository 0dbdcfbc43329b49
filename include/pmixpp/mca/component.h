/* The component descriptor: the only thing the core reads from a component DSO
 * before it has decided to trust it.
 *
 * Each DSO is named pmix_mca_<fw>_<comp>.so and exports exactly one C symbol,
 * pmix_mca_<fw>_<comp>_component, of type pmixpp_mca_component_t. A component
 * compiled into libpmix (PMIXPP_COMPONENTS_STATIC) defines the same symbol and
 * is listed in a generated table instead of being found on disk.
 *
 * ABI POLICY (read before changing anything in this file)
 *  1. Everything here is plain C: fixed-width integers, const char*, function
 *     pointers, opaque struct pointers. No C++ or STL type crosses this boundary;
 *     C++ objects travel only behind the SDK's abstract Module interfaces, created
 *     and destroyed by the component itself (create_module/destroy_module).
 *  2. The descriptor only grows at the end. A field is never removed, reordered,
 *     resized or given a new meaning. Adding fields at the end keeps
 *     PMIXPP_MCA_COMPONENT_ABI_VERSION; the core tells old from new descriptors by
 *     struct_size and never reads past it.
 *  3. PMIXPP_MCA_COMPONENT_ABI_VERSION changes only for an incompatible change
 *     (which rule 2 forbids; it exists so that we can still refuse old files if
 *     we ever must). The core accepts exactly its own ABI version.
 *  4. A struct_size smaller than PMIXPP_MCA_COMPONENT_MIN_SIZE (the size of the
 *     first published layout) is refused.
 *  5. The query context and result structs follow rules 1-4 too (they carry
 *     their own struct_size); the core fills the context, the component fills the
 *     result.
 *  6. The framework interface version (interface_major.interface_minor) says
 *     which Module interface the component was compiled against: the major must
 *     equal the core's, the minor must not be newer than the core's.
 *  7. The loader checks abi_version, struct_size, the framework is known, names
 *     equal the file name, and the interface version, in that order, by reading
 *     this struct only; no function pointer is called before all checks pass.
 */
#ifndef PMIXPP_MCA_COMPONENT_H
#define PMIXPP_MCA_COMPONENT_H

#include <stddef.h>
#include <stdint.h>

#include "pmixpp/mca/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PMIXPP_MCA_COMPONENT_ABI_VERSION 1u
#define PMIXPP_MCA_QUERY_MESSAGE_MAX 256

/* Outcome of a component's query(). */
typedef enum pmixpp_mca_query_outcome {
    /* Usable here, with result->priority (higher wins). */
    PMIXPP_MCA_QUERY_USABLE = 0,
    /* Not available on this host/configuration: silently skipped (logged at
       verbosity; a warning only when the user named the component). */
    PMIXPP_MCA_QUERY_NOT_AVAILABLE = 1,
    /* Something is wrong: reported as a load failure with result->message,
       selection goes on with the other components. */
    PMIXPP_MCA_QUERY_ERROR = 2,
    /* The user asked for this component and it cannot work: selection of the
       whole framework stops with result->message; no fall back. */
    PMIXPP_MCA_QUERY_FATAL = 3
} pmixpp_mca_query_outcome_t;

/* Opaque handle to the component's parameters; C++ code reaches it through
   pmixpp::mca::ComponentParameters::from() (pmixpp/mca/parameters.hpp). */
typedef struct pmixpp_mca_params pmixpp_mca_params_t;

/* What the core tells query() and create_module(). Filled by the core; valid only
   during the call. */
typedef struct pmixpp_mca_query_context {
    uint32_t struct_size;
    /* Effective priority: the descriptor's default_priority unless the
       <fw>_<comp>_priority parameter overrides it. */
    int32_t priority;
    /* Nonzero when the user named this component in PMIX_MCA_<fw>=a,b. */
    int32_t explicitly_requested;
    /* This component's registered parameters. */
    pmixpp_mca_params_t *params;
} pmixpp_mca_query_context_t;

/* What query() answers. The core zero-fills it, sets struct_size and
   priority = context->priority before the call. */
typedef struct pmixpp_mca_query_result {
    uint32_t struct_size;
    int32_t outcome; /* pmixpp_mca_query_outcome_t */
    int32_t priority;
    char message[PMIXPP_MCA_QUERY_MESSAGE_MAX]; /* NUL-terminated; for ERROR/FATAL */
} pmixpp_mca_query_result_t;

typedef struct pmixpp_mca_component {
    /* --- layout 1 (PMIXPP_MCA_COMPONENT_MIN_SIZE) --- */
    uint32_t abi_version;       /* PMIXPP_MCA_COMPONENT_ABI_VERSION at build time */
    uint32_t struct_size;       /* sizeof(pmixpp_mca_component_t) at build time */
    const char *framework_name; /* must equal <fw> of the file name */
    const char *component_name; /* must equal <comp> of the file name */
    uint32_t version_major, version_minor, version_release; /* the component's own */
    uint32_t interface_major, interface_minor;              /* framework interface built against */
    int32_t default_priority;
    /* Called once, before query, on the thread that opens the framework.
       Registers parameters; returns 0, or nonzero to be recorded as a failure. */
    int (*register_params)(pmixpp_mca_params_t *params);
    /* Called on the thread that selects (PMIx init or pmix_info). Must not throw
       (a C++ exception is caught and recorded, but do not rely on it). */
    void (*query)(const pmixpp_mca_query_context_t *context, pmixpp_mca_query_result_t *result);
    /* Returns a new pmixpp::mca::<fw>::Module* (as void*), or NULL on failure.
       Ownership passes to the core, which gives it back to destroy_module. */
    void *(*create_module)(const pmixpp_mca_query_context_t *context);
    /* Destroys a module made by create_module of the same component; may run on
       any thread, once per module. */
    void (*destroy_module)(void *module);
    /* --- new fields go here, never above --- */
} pmixpp_mca_component_t;

#define PMIXPP_MCA_COMPONENT_MIN_SIZE \
    (offsetof(pmixpp_mca_component_t, destroy_module) + sizeof(void (*)(void *)))

#ifdef __cplusplus
}
#endif

#endif /* PMIXPP_MCA_COMPONENT_H */
