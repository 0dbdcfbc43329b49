# PMIXPP_PACKAGE_PREFIX: where the Debian packages put the installation
# (cmake/Packaging.cmake, docs/packaging.md). Included by the top-level
# CMakeLists.txt before the subdirectories, so that tests/packages sees it on
# the first configure too, and again by Packaging.cmake (idempotent).
set(_pmixpp_multiarch "${CMAKE_LIBRARY_ARCHITECTURE}")
find_program(PMIXPP_DPKG_ARCHITECTURE dpkg-architecture)
if(PMIXPP_DPKG_ARCHITECTURE)
  execute_process(COMMAND ${PMIXPP_DPKG_ARCHITECTURE} -qDEB_HOST_MULTIARCH
                  OUTPUT_VARIABLE _pmixpp_multiarch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(PMIXPP_PACKAGE_PREFIX "/usr/lib/${_pmixpp_multiarch}/pmixpp" CACHE STRING
    "Where the Debian packages put the installation (CPACK_PACKAGING_INSTALL_PREFIX)")
# PMIXPP_PACKAGE_STRIP: the packages' programs, libraries and components are
# stripped, as Debian ships them (dh_strip); the build tree keeps its debug
# information. OFF keeps it in the packages too.
option(PMIXPP_PACKAGE_STRIP "Strip programs, libraries and components in the Debian packages" ON)
