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

configure_file(${PROJECT_SOURCE_DIR}/cmake/pmix.pc.in ${PROJECT_BINARY_DIR}/pmix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pmix.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/etc/pmix-mca-params.conf DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}
  COMPONENT core)

# Manual pages (docs/man), in the bin package; tests/packages checks them against --help.
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/pmixrun.1 ${PROJECT_SOURCE_DIR}/docs/man/pmix_info.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT bin)
