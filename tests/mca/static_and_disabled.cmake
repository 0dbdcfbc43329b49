# A second, minimal build of the whole project with one component compiled into
# libpmix (PMIXPP_COMPONENTS_STATIC) and one left out (PMIXPP_COMPONENTS_DISABLE),
# then checks that the result is what a packager asked for:
#   - no DSO for either component in lib/pmix, the other DSOs still there;
#   - pmix_info lists the static one with path "(static)", selected, and does
#     not list the disabled one;
#   - the static component really serves: pmixrun runs hello on it.
# Inputs: -DSOURCE_DIR= -DWORK_DIR= -DSTATIC=<fw>_<comp> -DDISABLE=<fw>_<comp>
#         (BUILD_TYPE None: no optimisation, no debug info: the quickest build)
#         -DBUILD_TYPE= -DC_COMPILER= -DCXX_COMPILER=
cmake_minimum_required(VERSION 3.25)

function(fail msg)
  message(FATAL_ERROR "static/disabled build: ${msg}")
endfunction()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    fail("'${cmd}' exited ${rc}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

string(REGEX REPLACE "^([a-z0-9]+)_(.*)$" "\\1" static_fw "${STATIC}")
string(REGEX REPLACE "^([a-z0-9]+)_(.*)$" "\\2" static_comp "${STATIC}")
string(REGEX REPLACE "^([a-z0-9]+)_(.*)$" "\\1" disable_fw "${DISABLE}")
string(REGEX REPLACE "^([a-z0-9]+)_(.*)$" "\\2" disable_comp "${DISABLE}")

run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DPMIXPP_BUILD_TESTS=OFF -DPMIXPP_BUILD_EXAMPLES=ON -DPMIXPP_WERROR=ON
    "-DPMIXPP_COMPONENTS_STATIC=${STATIC}" "-DPMIXPP_COMPONENTS_DISABLE=${DISABLE}")
run(${CMAKE_COMMAND} --build ${WORK_DIR} -j2)

set(libdir ${WORK_DIR}/lib/pmix)
foreach(comp IN ITEMS ${STATIC} ${DISABLE})
  if(EXISTS ${libdir}/pmix_mca_${comp}.so)
    fail("${libdir}/pmix_mca_${comp}.so was built, but ${comp} is static or disabled")
  endif()
endforeach()
file(GLOB dsos ${libdir}/pmix_mca_*.so)
if(NOT dsos)
  fail("no other component was built as a DSO in ${libdir}")
endif()

run(${WORK_DIR}/bin/pmix_info --parsable)
set(info "${run_output}")
foreach(expect IN ITEMS "mca:${static_fw}:${static_comp}:path:(static)"
                        "mca:${static_fw}:${static_comp}:selected:yes")
  string(FIND "${info}" "${expect}" at)
  if(at EQUAL -1)
    fail("pmix_info --parsable lacks '${expect}':\n${info}")
  endif()
endforeach()
string(FIND "${info}" "mca:${disable_fw}:${disable_comp}:" at)
if(NOT at EQUAL -1)
  fail("pmix_info lists the disabled component ${DISABLE}:\n${info}")
endif()

run(${WORK_DIR}/bin/pmixrun -n 2 ${WORK_DIR}/bin/hello)
string(FIND "${run_output}" "hello from rank 1 of 2" at)
if(at EQUAL -1)
  fail("hello under pmixrun did not run on the static ${STATIC}:\n${run_output}")
endif()
message(STATUS "static ${STATIC} and disabled ${DISABLE}: as configured")
