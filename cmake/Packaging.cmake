# Debian packages from CPack (docs/packaging.md): `cpack -G DEB` in the build tree.
# One package per install component:
#   core -> libpmixpp2     libpmix.so.2, the components it cannot start without
#                          (PMIXPP_CORE_FRAMEWORKS), the site parameter file
#   bin  -> pmixpp-bin     pmixrun, pmix_info, the hello example, man pages
#   dev  -> pmixpp-dev     headers, component SDK, CMake package, pkg-config
#   <fw>_<comp> (or the PACKAGE a component's CMakeLists names)
#        -> pmixpp-mca-<fw>-<comp>   one optional component or family
# Everything goes under PMIXPP_PACKAGE_PREFIX (/usr/lib/<triplet>/pmixpp), as
# Debian puts OpenPMIx under /usr/lib/<triplet>/pmix2: nothing collides with
# libpmix2, libpmix-dev, libpmix-bin or python3-pmix (tests/packages checks), and
# the $ORIGIN RUNPATHs (docs/building.md) keep working because the layout below
# the prefix is the install layout. Dependencies on system libraries come from
# dpkg-shlibdeps; dependencies between our packages from the component graph.
include(${CMAKE_CURRENT_LIST_DIR}/PackagePrefix.cmake)  # PMIXPP_PACKAGE_PREFIX
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
  message(STATUS "pmixpp: CPack packages need prefix-relative CMAKE_INSTALL_*DIR")
endif()
# The site parameter file's path is compiled in from CMAKE_INSTALL_PREFIX
# (docs/building.md): packages for distribution configure with
# -DCMAKE_INSTALL_PREFIX=<PMIXPP_PACKAGE_PREFIX> so that it is the package's etc/.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL PMIXPP_PACKAGE_PREFIX)
  message(STATUS "pmixpp: packages read site parameters from ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}, "
                 "not from the packaged ${PMIXPP_PACKAGE_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR} "
                 "(configure with -DCMAKE_INSTALL_PREFIX=${PMIXPP_PACKAGE_PREFIX} for distribution packages)")
endif()

# Each package gets its copyright file (share/doc/<package>/copyright under the
# prefix; in the .deb at /usr/share/doc/<package>/copyright: debian/MoveDocs.cmake).
function(_pmixpp_package component package)
  string(TOUPPER "${component}" up)
  set(CPACK_DEBIAN_${up}_PACKAGE_NAME ${package} PARENT_SCOPE)
  set(CPACK_DEBIAN_${up}_FILE_NAME "${package}_${PROJECT_VERSION}-1_${CPACK_DEBIAN_PACKAGE_ARCHITECTURE}.deb"
      PARENT_SCOPE)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endfunction()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pmixpp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "pmixpp")
set(CPACK_PACKAGE_CONTACT "pmixpp maintainers <pmixpp-maintainers@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX "${PMIXPP_PACKAGE_PREFIX}")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ${PMIXPP_PACKAGE_STRIP})  # PackagePrefix.cmake
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# dpkg-shlibdeps would resolve libpmix.so.2 to Debian's libpmix2 (same soname):
# cmake/debian/dpkg-shlibdeps-pmixpp excludes that package; the dependency on
# libpmixpp2 is the component one.
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/CPackProjectConfig.cmake.in
               ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake)
# Each package's copyright goes to /usr/share/doc/<package>/ (Debian's policy).
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/MoveDocs.cmake)
# The first line of each package's CPACK_DEBIAN_<C>_DESCRIPTION is its synopsis.
# CPackDeb prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY (from project(DESCRIPTION))
# to every package's description unless it is CPack's default: set it to that
# default so each package keeps its own synopsis (tests/packages checks it).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
if(NOT CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
  find_program(PMIXPP_DPKG dpkg)
  if(PMIXPP_DPKG)
    execute_process(COMMAND ${PMIXPP_DPKG} --print-architecture
                    OUTPUT_VARIABLE CPACK_DEBIAN_PACKAGE_ARCHITECTURE OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
endif()

# libhwloc is opened at run time, not linked (docs/building.md), so dpkg-shlibdeps
# cannot see it: the core depends by hand on the package of the library found.
set(PMIXPP_HWLOC_DEBIAN_PACKAGE "" CACHE STRING "Debian package of the libhwloc runtime (default: dpkg -S)")
if(NOT PMIXPP_HWLOC_DEBIAN_PACKAGE AND PMIXPP_HWLOC_LIBRARY)
  get_filename_component(_pmixpp_hwloc_real ${PMIXPP_HWLOC_LIBRARY} REALPATH)
  execute_process(COMMAND dpkg-query -S ${_pmixpp_hwloc_real} OUTPUT_VARIABLE _pmixpp_hwloc_pkg
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  string(REGEX REPLACE "[:,].*" "" _pmixpp_hwloc_pkg "${_pmixpp_hwloc_pkg}")
  set(PMIXPP_HWLOC_DEBIAN_PACKAGE "${_pmixpp_hwloc_pkg}")
endif()

_pmixpp_package(core libpmixpp2)
set(CPACK_DEBIAN_CORE_DESCRIPTION "pmixpp: PMIx 4.2 library (libpmix.so.2) and its core components
pmixpp is a C++20 implementation of the PMIx standard, ABI-compatible with
OpenPMIx 4.2. This package holds libpmix.so.2 and the transport, datastore
and event-cache components it cannot start without, under
${PMIXPP_PACKAGE_PREFIX}, beside Debian's libpmix2; docs/packaging.md
of the source says how to make programs use it.")
set(CPACK_DEBIAN_CORE_PACKAGE_DEPENDS "${PMIXPP_HWLOC_DEBIAN_PACKAGE}")
set(CPACK_DEBIAN_CORE_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_CORE_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)

_pmixpp_package(bin pmixpp-bin)
set(CPACK_COMPONENT_BIN_DEPENDS core)
set(CPACK_DEBIAN_BIN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_BIN_DESCRIPTION "pmixpp: pmixrun, pmix_info and the hello example
The single-node launcher pmixrun(1), pmix_info(1) and an example client,
under ${PMIXPP_PACKAGE_PREFIX}/bin, with their manual pages.")

_pmixpp_package(dev pmixpp-dev)
set(CPACK_COMPONENT_DEV_DEPENDS core)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION "pmixpp: headers, component SDK, CMake package and pkg-config file
Build PMIx clients and servers against pmixpp, and components out of tree
(find_package(pmixpp), pmixpp_add_component(); pkg-config pmix with
PKG_CONFIG_PATH=${PMIXPP_PACKAGE_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig).")

set(CPACK_COMPONENTS_ALL core bin dev)
get_property(_pmixpp_pkg_components GLOBAL PROPERTY PMIXPP_PACKAGE_COMPONENTS)
list(REMOVE_DUPLICATES _pmixpp_pkg_components)
list(REMOVE_ITEM _pmixpp_pkg_components core bin dev)
foreach(_c IN LISTS _pmixpp_pkg_components)
  string(REPLACE "_" "-" _dash "${_c}")
  string(TOUPPER "${_c}" _up)
  _pmixpp_package(${_c} pmixpp-mca-${_dash})
  set(CPACK_COMPONENT_${_up}_DEPENDS core)
  set(CPACK_DEBIAN_${_up}_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_${_up}_DESCRIPTION "pmixpp: MCA component ${_c}
An optional pmixpp component (${PMIXPP_PACKAGE_PREFIX}/lib/pmix), picked up
by the core at start-up when installed; pmix_info lists it.")
  list(APPEND CPACK_COMPONENTS_ALL ${_c})
endforeach()

include(CPack)
