// headers_compile_cxx: the public headers and their macros build as C++20
// with -Wall -Wextra -Wpedantic -Werror, and every helper a macro calls
// resolves in libpmix.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include "headers_use_macros.inc"

int main() {
    // Reached only by the test's link step; not run.
    return PMIx_Initialized() ? use_every_macro() : 0;
}
