# Installs the current build into a temporary prefix, builds examples/component
# against it with find_package(pmixpp), and checks that the installed pmix_info
# loads the component through PMIX_MCA_mca_base_component_path.
#   cmake -DBUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -DLIBDIR=lib -DBINDIR=bin -P this
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${shown}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo)
run(${CMAKE_COMMAND} --build ${build})
if(NOT EXISTS ${build}/pmix_mca_plog_example.so)
  message(FATAL_ERROR "the example did not produce ${build}/pmix_mca_plog_example.so")
endif()

# The installed pmix_info finds the installed libpmix through its RUNPATH
# ($ORIGIN/../lib, tests/install checks it); LD_LIBRARY_PATH points there too.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${LIBDIR}
          PMIX_MCA_mca_base_component_path=${build}:@default@
          PMIX_MCA_plog_example_prefix=from-env
          ${prefix}/${BINDIR}/pmix_info --parsable --all
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
foreach(re "mca:plog:example:version:1.0.0" "mca:plog:example:selected:yes"
           "mca:plog:example:path:${build}/pmix_mca_plog_example.so"
           "param:plog:example:plog_example_prefix:value:from-env")
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "installed pmix_info (rc ${rc}) does not show '${re}':\n${all}")
  endif()
endforeach()
if(all MATCHES "failed:plog:example")
  message(FATAL_ERROR "the example component failed to load:\n${all}")
endif()
message(STATUS "out-of-tree component built against ${prefix} and loaded")
