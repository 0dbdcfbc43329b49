/* headers_compile (C): the public headers and their macros build as strict
 * ISO C11 with -Wall -Wextra -Wpedantic -Werror. */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include "headers_use_macros.inc"

int main(void) {
    /* Reached only by the test's link step; not run. */
    return PMIx_Initialized() ? use_every_macro() : 0;
}
