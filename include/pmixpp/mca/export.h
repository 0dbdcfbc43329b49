/* Symbol visibility for the component SDK.
 *
 * libpmix and every component are built with -fvisibility=hidden, so nothing is
 * visible across a DSO boundary unless it says so:
 *   PMIXPP_SDK_EXPORT        classes and functions of namespace pmixpp that libpmix
 *                            offers to components and tools (also filtered by
 *                            framework/libpmix.map: only pmixpp::* and PMIx_* leave).
 *   PMIXPP_COMPONENT_EXPORT  the one descriptor symbol a component DSO exports.
 * Both are plain C preprocessor macros so that C code may include this header. */
#ifndef PMIXPP_MCA_EXPORT_H
#define PMIXPP_MCA_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define PMIXPP_SDK_EXPORT __attribute__((visibility("default")))
#define PMIXPP_COMPONENT_EXPORT __attribute__((visibility("default")))
#else
#define PMIXPP_SDK_EXPORT
#define PMIXPP_COMPONENT_EXPORT
#endif

#endif /* PMIXPP_MCA_EXPORT_H */
