# Behaviour of the helpers that header macros and bindings rely on.
#   runtime_probe   ../shared/abi/runtime_probe.c built as C11 against our headers,
#                   linked to our libpmix; its output equals runtime_probe.out.txt
#   python_import   Debian's python3-pmix imports with our libpmix.so.2 (it binds
#                   every symbol at import) and really loads ours

set(PMIXPP_RUNTIME_PROBE_DIR ${PROJECT_SOURCE_DIR}/../shared/abi)
set(PMIXPP_RUNTIME_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/runtime)

if(EXISTS ${PMIXPP_RUNTIME_PROBE_DIR}/runtime_probe.c)
  add_executable(pmixpp_runtime_probe ${PMIXPP_RUNTIME_PROBE_DIR}/runtime_probe.c)
  target_link_libraries(pmixpp_runtime_probe PRIVATE pmix)
  set_target_properties(pmixpp_runtime_probe PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME runtime_probe
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:pmixpp_runtime_probe>
                   -DEXPECTED=${PMIXPP_RUNTIME_PROBE_DIR}/runtime_probe.out.txt
                   -P ${PMIXPP_RUNTIME_TEST_DIR}/run_and_compare.cmake)
else()
  add_test(NAME runtime_probe COMMAND ${CMAKE_COMMAND}
           "-DMESSAGE=${PMIXPP_RUNTIME_PROBE_DIR}/runtime_probe.c not found: ../shared must sit beside the clone"
           -P ${PMIXPP_RUNTIME_TEST_DIR}/fail.cmake)
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
