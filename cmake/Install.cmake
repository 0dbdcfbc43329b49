# Installed layout: DESIGN.md §1.
# Install components (= Debian packages, cmake/Packaging.cmake): core (library,
# core components, site parameters), bin (programs), dev (headers, SDK, CMake
# package, pkg-config), one per optional component (PmixppComponent.cmake).
install(TARGETS pmix EXPORT pmixppTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT core NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(EXPORT pmixppTargets NAMESPACE pmixpp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pmixpp
  COMPONENT dev)

include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pmixppConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pmixppConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pmixpp)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pmixppConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pmixppConfig.cmake ${PROJECT_BINARY_DIR}/pmixppConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/PmixppComponent.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pmixpp COMPONENT dev)

# pmix.pc names its prefix relative to its own folder (${pcfiledir}, pkgconf and
# pkg-config both know it): right wherever the tree is installed or unpacked,
# whatever CMAKE_INSTALL_PREFIX the build had (packages, relocated prefixes).
file(RELATIVE_PATH PMIXPP_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" PMIXPP_PC_TO_PREFIX "${PMIXPP_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/pmix.pc.in ${PROJECT_BINARY_DIR}/pmix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pmix.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/etc/pmix-mca-params.conf DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}
  COMPONENT core)

# Manual pages (docs/man), in the bin package, compressed as Debian's policy
# wants (gzip -9n: no name, no time stamp, so the same bytes every build);
# tests/packages checks them against --help.
find_program(PMIXPP_GZIP gzip)
set(_pmixpp_man_pages)
foreach(_page pmixrun.1 pmix_info.1)
  if(PMIXPP_GZIP)
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/man/${_page}.gz
      COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/docs/man/${_page} ${PROJECT_BINARY_DIR}/man/${_page}
      COMMAND ${PMIXPP_GZIP} -9nf ${PROJECT_BINARY_DIR}/man/${_page}
      DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${_page} VERBATIM)
    list(APPEND _pmixpp_man_pages ${PROJECT_BINARY_DIR}/man/${_page}.gz)
  else()
    list(APPEND _pmixpp_man_pages ${PROJECT_SOURCE_DIR}/docs/man/${_page})
  endif()
endforeach()
add_custom_target(pmixpp_man_pages ALL DEPENDS ${_pmixpp_man_pages})
install(FILES ${_pmixpp_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT bin)
