# ABI conformance of the public headers and of libpmix.so.2 against PMIx 4.2.
#   abi_probe                  layout_probe.c built against the OpenPMIx 4.2.2 headers
#                              and against ours prints the same struct layouts and
#                              key constants
#   constants_match_reference  every constant of the 4.2.2 headers has the same value in ours
#   exported_symbols           SONAME, the 141 PMIx_* functions of pmix42_functions.txt
#                              (which must be what Debian's 4.2.2 libpmix.so.2 exports),
#                              nothing else, no versions
#   headers_compile_c/_cxx     headers and macros build clean as C11 and C++20 and link
#   generated_constants_current  the generated header sections equal what
#                              scripts/gen_pmix_constants.py makes from its facts
# The reference (PMIXPP_REFERENCE_PMIX_*) is found in CMakeLists.txt.

set(PMIXPP_ABI_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/abi)

# A test that can only fail, with a message saying what is missing.
function(pmixpp_abi_missing_input test_name what)
  add_test(NAME ${test_name} COMMAND ${CMAKE_COMMAND} "-DMESSAGE=${what}" -P ${PMIXPP_ABI_TEST_DIR}/fail.cmake)
endfunction()

# --- abi_probe ---------------------------------------------------------------
# Compiled by the test itself, against both sets of headers: a layout that
# stops matching fails this test (naming the line), not everyone's build.
if(PMIXPP_REFERENCE_PMIX_INCLUDE_DIR)
  add_test(NAME abi_probe
           COMMAND Python3::Interpreter ${PMIXPP_PROBE_COMPARE}
                   --cc ${CMAKE_C_COMPILER} --source ${PMIXPP_ABI_TEST_DIR}/layout_probe.c
                   --workdir ${CMAKE_CURRENT_BINARY_DIR}/abi_probe
                   --reference-include ${PMIXPP_REFERENCE_PMIX_INCLUDE_DIR}
                   --ours-include ${PROJECT_SOURCE_DIR}/include)
else()
  pmixpp_abi_missing_input(abi_probe "OpenPMIx 4.2 headers not found (install libpmix-dev: scripts/install-deps.sh)")
endif()

# --- constants_match_reference -------------------------------------------------
if(PMIXPP_REFERENCE_PMIX_INCLUDE_DIR)
  add_test(NAME constants_match_reference
           COMMAND Python3::Interpreter ${PMIXPP_ABI_TEST_DIR}/check_constants.py
                   --cxx ${CMAKE_CXX_COMPILER}
                   --reference ${PMIXPP_REFERENCE_PMIX_INCLUDE_DIR}
                   --ours ${PROJECT_SOURCE_DIR}/include
                   --workdir ${CMAKE_CURRENT_BINARY_DIR}/constants_match_reference)
else()
  pmixpp_abi_missing_input(constants_match_reference
                           "OpenPMIx 4.2 headers not found (install libpmix-dev: scripts/install-deps.sh)")
endif()

# --- exported_symbols -----------------------------------------------------------
find_program(PMIXPP_CXXFILT NAMES c++filt DOC "demangler used by the exported_symbols test")
if(PMIXPP_REFERENCE_PMIX_LIBRARY)
  add_test(NAME exported_symbols
           COMMAND Python3::Interpreter ${PMIXPP_ABI_TEST_DIR}/check_exports.py
                   --lib $<TARGET_FILE:pmix>
                   --functions ${PMIXPP_ABI_TEST_DIR}/pmix42_functions.txt
                   --reference-lib ${PMIXPP_REFERENCE_PMIX_LIBRARY}
                   --nm ${CMAKE_NM} --readelf ${CMAKE_READELF} --cxxfilt ${PMIXPP_CXXFILT})
else()
  pmixpp_abi_missing_input(exported_symbols "OpenPMIx 4.2 libpmix.so not found (install libpmix-dev: scripts/install-deps.sh)")
endif()

# --- headers_compile_c / headers_compile_cxx ----------------------------------------
# Compiled by the test itself (not by the build), so a header that stops
# compiling fails this test with the compiler's message instead of breaking
# everyone's build.
set(_pmixpp_hc_flags -Wall -Wextra -Wpedantic -Werror -I${PROJECT_SOURCE_DIR}/include -I${PMIXPP_ABI_TEST_DIR})
add_test(NAME headers_compile_c
         COMMAND ${CMAKE_C_COMPILER} -std=c11 ${_pmixpp_hc_flags} ${PMIXPP_ABI_TEST_DIR}/headers_compile.c
                 -o ${CMAKE_CURRENT_BINARY_DIR}/headers_compile_c $<TARGET_FILE:pmix>)
add_test(NAME headers_compile_cxx
         COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 ${_pmixpp_hc_flags} ${PMIXPP_ABI_TEST_DIR}/headers_compile.cpp
                 -o ${CMAKE_CURRENT_BINARY_DIR}/headers_compile_cxx $<TARGET_FILE:pmix>)

# --- generated_constants_current ------------------------------------------------
# The constant and attribute sections of the headers and framework/api/attributes.inc
# are what scripts/gen_pmix_constants.py makes from the facts it keeps in scripts/
# (pmix_spec_items.tsv, extracted once from the PMIx standard, and pmix42_facts.txt).
add_test(NAME generated_constants_current
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/gen_pmix_constants.py --check)
