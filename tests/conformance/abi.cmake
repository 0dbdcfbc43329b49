# ABI conformance of the public headers and of libpmix.so.2 against PMIx 4.2.
#   abi_probe                  struct layouts and key constants equal those measured on 4.2.2
#   constants_match_reference  every constant of the 4.2.2 headers has the same value in ours
#   exported_symbols           SONAME, the 141 PMIx_* functions, nothing else, no versions
#   headers_compile_c/_cxx     headers and macros build clean as C11 and C++20 and link
# The facts come from ../shared/abi (beside the clone in CI) and from the
# OpenPMIx 4.2.2 headers of libpmix-dev (scripts/install-deps.sh).

set(PMIXPP_SHARED_ABI_DIR ${PROJECT_SOURCE_DIR}/../shared/abi)
set(PMIXPP_ABI_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/abi)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# A test that can only fail, with a message saying what is missing.
function(pmixpp_abi_missing_input test_name what)
  add_test(NAME ${test_name} COMMAND ${CMAKE_COMMAND} "-DMESSAGE=${what}" -P ${PMIXPP_ABI_TEST_DIR}/fail.cmake)
endfunction()

# --- abi_probe ---------------------------------------------------------------
if(EXISTS ${PMIXPP_SHARED_ABI_DIR}/abi_probe.c)
  add_executable(pmixpp_abi_probe ${PMIXPP_SHARED_ABI_DIR}/abi_probe.c)
  target_include_directories(pmixpp_abi_probe PRIVATE ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(pmixpp_abi_probe PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME abi_probe
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:pmixpp_abi_probe>
                   -DEXPECTED=${PMIXPP_SHARED_ABI_DIR}/abi_probe.out.txt
                   -P ${PMIXPP_ABI_TEST_DIR}/compare_output.cmake)
else()
  pmixpp_abi_missing_input(abi_probe "${PMIXPP_SHARED_ABI_DIR}/abi_probe.c not found: ../shared must sit beside the clone")
endif()

# --- constants_match_reference -------------------------------------------------
find_path(PMIXPP_REFERENCE_PMIX_INCLUDE_DIR pmix_common.h
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/pmix2/include /usr/lib/x86_64-linux-gnu/pmix2/include
          NO_DEFAULT_PATH
          DOC "include directory of the OpenPMIx 4.2 headers (libpmix-dev), used as the oracle of constant values")
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
add_test(NAME exported_symbols
         COMMAND Python3::Interpreter ${PMIXPP_ABI_TEST_DIR}/check_exports.py
                 --lib $<TARGET_FILE:pmix>
                 --symbols ${PMIXPP_SHARED_ABI_DIR}/pmix_symbols_usage.tsv
                 --nm ${CMAKE_NM} --readelf ${CMAKE_READELF} --cxxfilt ${PMIXPP_CXXFILT})

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
# are what scripts/gen_pmix_constants.py makes from the spec and scripts/pmix42_facts.txt.
if(EXISTS ${PROJECT_SOURCE_DIR}/../shared/spec/Chap_API_Struct.tex)
  add_test(NAME generated_constants_current
           COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/gen_pmix_constants.py --check)
else()
  pmixpp_abi_missing_input(generated_constants_current "${PROJECT_SOURCE_DIR}/../shared/spec not found")
endif()
