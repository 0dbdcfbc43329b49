/* Shared by tool_tool.c (the tool) and tool_job.c (the job that starts it):
 * the event codes they exchange. */
#ifndef TOOL_COMMON_H
#define TOOL_COMMON_H

#include <pmix_common.h>

#define CODE_TOOL_READY (PMIX_EXTERNAL_ERR_BASE - 41)  /* tool -> job, range GLOBAL */
#define CODE_PING_CUSTOM (PMIX_EXTERNAL_ERR_BASE - 42) /* rank 1 -> the tool, CUSTOM range */
#define CODE_PING_GLOBAL (PMIX_EXTERNAL_ERR_BASE - 43) /* rank 0 -> everybody, GLOBAL */
#define CODE_LOCAL (PMIX_EXTERNAL_ERR_BASE - 44)       /* standalone tool, PROC_LOCAL */

#endif
