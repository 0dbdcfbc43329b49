# dropin.python_server_client: Debian's python3-pmix as a second real
# consumer of our libpmix.so.2 (issue 5; OPENMPI-CONTRACT.md section 5).
# python/server.py hosts a job with PMIxServer (server module upcalls in
# Python) and starts python/client.py twice; the clients run init, put,
# commit, fence, get, publish, lookup, unpublish, events and finalize, and
# every process checks that the libpmix.so.2 it mapped is ours.
#
# Debian's interpreter on purpose: python3-pmix is built for it (the python3
# on PATH may lack dist-packages).
if(EXISTS /usr/bin/python3)
  set(_pmixpp_dropin_python_env "LD_LIBRARY_PATH=$<TARGET_FILE_DIR:pmix>")
  if(PMIXPP_SANITIZE MATCHES "address")
    # An ASan-built libpmix needs the runtime loaded first in an
    # uninstrumented interpreter (the clients inherit it); the interpreter's
    # own allocations are not ours to leak-check.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE _pmixpp_dropin_libasan OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _pmixpp_dropin_python_env "LD_PRELOAD=${_pmixpp_dropin_libasan}"
         "ASAN_OPTIONS=detect_leaks=0")
  elseif(PMIXPP_SANITIZE MATCHES "thread")
    # tsan: the same for a TSan-built libpmix (its runtime must be loaded first).
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libtsan.so
                    OUTPUT_VARIABLE _pmixpp_dropin_libtsan OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _pmixpp_dropin_python_env "LD_PRELOAD=${_pmixpp_dropin_libtsan}")
  endif()
  add_test(NAME dropin.python_server_client
           COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/python/server.py
                   $<TARGET_FILE_DIR:pmix>)
  set_tests_properties(dropin.python_server_client PROPERTIES
                       ENVIRONMENT "${_pmixpp_dropin_python_env}" TIMEOUT 120 LABELS dropin)
endif()
