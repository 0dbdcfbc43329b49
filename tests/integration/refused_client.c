/* A client with a wrong job secret or an unregistered rank is refused, and
 * its PMIx_Init says why. usage: refused_client secret|rank|uid
 * uid: run as another user than the one registered (setpriv), holding the
 * job's secret: refused on every transport (docs/security.md). */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    pmix_status_t expected;
    if (strcmp(argv[1], "secret") == 0) {
        setenv("PMIXPP_JOB_SECRET", "0123456789abcdef0123456789abcdef", 1);
        expected = PMIX_ERR_INVALID_CRED;
    } else if (strcmp(argv[1], "uid") == 0) {
        expected = PMIX_ERR_INVALID_CRED;
    } else {
        setenv("PMIX_RANK", "4242", 1);
        expected = PMIX_ERR_NOT_FOUND;
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != expected) {
        fprintf(stderr, "refused: PMIx_Init returned %s, expected %s\n", PMIx_Error_string(rc),
                PMIx_Error_string(expected));
        return 1;
    }
    if (PMIx_Initialized()) return 1;
    printf("refused as expected: %s\n", PMIx_Error_string(rc));
    return 0;
}
