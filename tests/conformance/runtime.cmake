# Behaviour of the helpers that header macros and bindings rely on.
#   runtime_probe   runtime/helper_probe.c built twice, against the OpenPMIx 4.2.2
#                   headers and linked to Debian's OpenPMIx libpmix.so, and against
#                   our headers and linked to our libpmix.so.2; both print the same
#   python_import   Debian's python3-pmix imports with our libpmix.so.2 (it binds
#                   every symbol at import) and really loads ours

set(PMIXPP_RUNTIME_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/runtime)

if(PMIXPP_REFERENCE_PMIX_INCLUDE_DIR AND PMIXPP_REFERENCE_PMIX_LIBRARY)
  set(_pmixpp_probe_flags "")
  set(_pmixpp_probe_reference_env "")
  if(PMIXPP_SANITIZE)
    # Our library is instrumented: the probe must bring the sanitizer runtime.
    # Debian's OpenPMIx is not ours to leak-check.
    set(_pmixpp_probe_flags --flag=-fsanitize=${PMIXPP_SANITIZE})
    set(_pmixpp_probe_reference_env --reference-env=ASAN_OPTIONS=detect_leaks=0)
  endif()
  add_test(NAME runtime_probe
           COMMAND Python3::Interpreter ${PMIXPP_PROBE_COMPARE}
                   --cc ${CMAKE_C_COMPILER} --source ${PMIXPP_RUNTIME_TEST_DIR}/helper_probe.c
                   --workdir ${CMAKE_CURRENT_BINARY_DIR}/runtime_probe
                   --reference-include ${PMIXPP_REFERENCE_PMIX_INCLUDE_DIR}
                   --reference-lib ${PMIXPP_REFERENCE_PMIX_LIBRARY}
                   --ours-include ${PROJECT_SOURCE_DIR}/include
                   --ours-lib $<TARGET_FILE:pmix>
                   ${_pmixpp_probe_flags} ${_pmixpp_probe_reference_env})
  set_tests_properties(runtime_probe PROPERTIES TIMEOUT 120)
else()
  pmixpp_abi_missing_input(runtime_probe
                           "OpenPMIx 4.2 headers or libpmix.so not found (install libpmix-dev: scripts/install-deps.sh)")
endif()

# Debian's interpreter on purpose: python3-pmix is built for it.
if(EXISTS /usr/bin/python3)
  set(_pmixpp_python_env "LD_LIBRARY_PATH=$<TARGET_FILE_DIR:pmix>")
  if(PMIXPP_SANITIZE MATCHES "address")
    # An ASan-built libpmix needs the runtime loaded first in an uninstrumented
    # interpreter; the interpreter's own allocations are not ours to leak-check.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE _pmixpp_libasan OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _pmixpp_python_env "LD_PRELOAD=${_pmixpp_libasan}" "ASAN_OPTIONS=detect_leaks=0")
  elseif(PMIXPP_SANITIZE MATCHES "thread")
    # tsan: the same for a TSan-built libpmix (its runtime must be loaded first).
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libtsan.so
                    OUTPUT_VARIABLE _pmixpp_libtsan OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _pmixpp_python_env "LD_PRELOAD=${_pmixpp_libtsan}")
  endif()
  add_test(NAME python_import
           COMMAND /usr/bin/python3 -W ignore ${PMIXPP_RUNTIME_TEST_DIR}/python_import.py $<TARGET_FILE_DIR:pmix>)
  set_tests_properties(python_import PROPERTIES ENVIRONMENT "${_pmixpp_python_env}" TIMEOUT 60)
endif()

# load_footprint: a C program linked to libpmix only; fails if libspdlog,
# libfmt, the full libevent or libhwloc are loaded with it (start-up cost of
# every client).
add_executable(pmixpp_load_footprint ${PMIXPP_RUNTIME_TEST_DIR}/load_footprint.c)
target_link_libraries(pmixpp_load_footprint PRIVATE pmix)
set_target_properties(pmixpp_load_footprint PROPERTIES C_STANDARD 11
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME load_footprint COMMAND pmixpp_load_footprint)
