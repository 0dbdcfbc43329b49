# CPACK_PRE_BUILD_SCRIPTS (cmake/Packaging.cmake): run by cpack after it staged
# each package's files, before it builds the packages. Debian's policy wants a
# package's copyright at /usr/share/doc/<package>/copyright, outside our prefix;
# `cmake --install` keeps it under the prefix (share/doc/<package>), where it
# belongs for a plain installation. The package names are ours (libpmixpp2,
# pmixpp-*): nothing of Debian's OpenPMIx is at those paths.
file(GLOB _pmixpp_docs LIST_DIRECTORIES true
     "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/*")
foreach(_doc IN LISTS _pmixpp_docs)
  string(FIND "${_doc}" "${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/" _at REVERSE)
  string(SUBSTRING "${_doc}" 0 ${_at} _stage)
  get_filename_component(_package "${_doc}" NAME)
  file(MAKE_DIRECTORY "${_stage}/usr/share/doc")
  file(RENAME "${_doc}" "${_stage}/usr/share/doc/${_package}")
  file(GLOB _left "${_stage}${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/*")
  if(NOT _left)
    file(REMOVE_RECURSE "${_stage}${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc")
  endif()
endforeach()
