# pmixpp_add_component(): build one MCA component, in the pmixpp tree or out of
# tree against an installed pmixpp (find_package(pmixpp) includes this file with
# PMIXPP_OUT_OF_TREE=ON).
#
#   pmixpp_add_component(<fw> <comp>
#       SOURCES <src>...                 required
#       [LINK_LIBRARIES <lib>...]        extra libraries (e.g. PkgConfig::FOO)
#       [INCLUDE_DIRECTORIES <dir>...]
#       [OUTPUT_DIRECTORY <dir>]         where the DSO goes (default: in tree
#                                        build/lib/pmix, out of tree the binary dir)
#       [FILE_NAME <name>]               file name without ".so" (default
#                                        pmix_mca_<fw>_<comp>); tests use it to give a
#                                        file a name its descriptor does not match
#       [TARGET <name>]                  CMake target name (default: the file name)
#       [NO_INSTALL]                     do not install (test components)
#       [PACKAGE <name>]                 the install component, i.e. the Debian
#                                        package (cmake/Packaging.cmake) it goes in:
#                                        default "core" for the frameworks the core
#                                        cannot start without (PMIXPP_CORE_FRAMEWORKS),
#                                        else <fw>_<comp> (a package of its own);
#                                        a family shares one by naming it here
#       [DSO_ONLY])                      never compiled into libpmix
#
# In tree, <fw>_<comp> in PMIXPP_COMPONENTS_DISABLE leaves the component out, and
# in PMIXPP_COMPONENTS_STATIC compiles it into libpmix: its objects are added to
# target pmix and pmixpp_finalize_static_components() (called once at the end of
# the top-level CMakeLists.txt) generates the explicit table of their descriptors.
# Components given OUTPUT_DIRECTORY, NO_INSTALL or DSO_ONLY are always DSOs.
# Sets PMIXPP_COMPONENT_TARGET in the caller's scope (empty when disabled).
include_guard(GLOBAL)

# The frameworks libpmix cannot start without: their components install with the
# core library (install component "core", package libpmixpp2).
set(PMIXPP_CORE_FRAMEWORKS ptl gds evcache)

function(pmixpp_add_component fw comp)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "NO_INSTALL;DSO_ONLY" "OUTPUT_DIRECTORY;FILE_NAME;TARGET;PACKAGE"
                        "SOURCES;LINK_LIBRARIES;INCLUDE_DIRECTORIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pmixpp_add_component(${fw} ${comp}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "pmixpp_add_component(${fw} ${comp}): SOURCES is required")
  endif()
  if(fw MATCHES "_" OR NOT fw MATCHES "^[a-z0-9]+$" OR NOT comp MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "pmixpp_add_component(${fw} ${comp}): names must be lower-case "
                        "letters and digits (the framework without '_')")
  endif()
  set(name ${fw}_${comp})
  set(file_name pmix_mca_${name})
  if(ARG_FILE_NAME)
    set(file_name ${ARG_FILE_NAME})
  endif()
  set(target ${file_name})
  if(ARG_TARGET)
    set(target ${ARG_TARGET})
  endif()
  set(PMIXPP_COMPONENT_TARGET "" PARENT_SCOPE)

  set(special FALSE)
  if(ARG_OUTPUT_DIRECTORY OR ARG_NO_INSTALL OR ARG_DSO_ONLY OR PMIXPP_OUT_OF_TREE)
    set(special TRUE)
  endif()
  if(NOT special AND name IN_LIST PMIXPP_COMPONENTS_DISABLE)
    message(STATUS "pmixpp: component ${name} disabled (PMIXPP_COMPONENTS_DISABLE)")
    return()
  endif()

  if(PMIXPP_OUT_OF_TREE)
    set(core pmixpp::pmix)
  else()
    set(core pmix)
  endif()

  if(NOT special AND name IN_LIST PMIXPP_COMPONENTS_STATIC)
    # Compiled into libpmix: same sources, same descriptor, listed in the table.
    add_library(${target} OBJECT ${ARG_SOURCES})
    target_include_directories(${target} PRIVATE $<TARGET_PROPERTY:pmix,INTERFACE_INCLUDE_DIRECTORIES>
                                                 ${ARG_INCLUDE_DIRECTORIES})
    target_link_libraries(${target} PRIVATE pmixpp_warnings ${ARG_LINK_LIBRARIES})
    target_sources(pmix PRIVATE $<TARGET_OBJECTS:${target}>)
    if(ARG_LINK_LIBRARIES)
      target_link_libraries(pmix PRIVATE ${ARG_LINK_LIBRARIES})
    endif()
    set_property(GLOBAL APPEND PROPERTY PMIXPP_STATIC_COMPONENT_LIST ${name})
    message(STATUS "pmixpp: component ${name} compiled into libpmix (PMIXPP_COMPONENTS_STATIC)")
    set(PMIXPP_COMPONENT_TARGET ${target} PARENT_SCOPE)
    return()
  endif()

  add_library(${target} MODULE ${ARG_SOURCES})
  if(ARG_OUTPUT_DIRECTORY)
    set(outdir ${ARG_OUTPUT_DIRECTORY})
  elseif(PMIXPP_OUT_OF_TREE)
    if(CMAKE_LIBRARY_OUTPUT_DIRECTORY)
      set(outdir ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
    else()
      set(outdir ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  else()
    set(outdir ${PMIXPP_COMPONENT_BUILD_DIR})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    SUFFIX ".so"
    OUTPUT_NAME ${file_name}
    LIBRARY_OUTPUT_DIRECTORY ${outdir}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_include_directories(${target} PRIVATE ${ARG_INCLUDE_DIRECTORIES})
  target_link_libraries(${target} PRIVATE ${core} ${ARG_LINK_LIBRARIES})
  if(NOT PMIXPP_OUT_OF_TREE)
    target_link_libraries(${target} PRIVATE pmixpp_warnings)
  endif()
  # A component must not leave a symbol for the loader to find somewhere else.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  # As libpmix: the component's own hidden copy of the libstdc++ it uses, so that
  # loading it does not load libstdc++.so into a C process.
  if(PMIXPP_STATIC_LIBSTDCXX)
    target_link_options(${target} PRIVATE -static-libstdc++ "LINKER:--exclude-libs,ALL")
  endif()
  if(NOT ARG_NO_INSTALL)
    # The install component is the package the DSO ships in (docs/packaging.md).
    if(ARG_PACKAGE)
      set(package ${ARG_PACKAGE})
    elseif(fw IN_LIST PMIXPP_CORE_FRAMEWORKS)
      set(package core)
    else()
      set(package ${name})
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION ${PMIXPP_COMPONENT_INSTALL_DIR} COMPONENT ${package})
    if(NOT PMIXPP_OUT_OF_TREE)
      set_property(GLOBAL APPEND PROPERTY PMIXPP_PACKAGE_COMPONENTS ${package})
    endif()
    # In tree: the installed component finds the libpmix of its prefix (the
    # top-level CMakeLists.txt). Out of tree the core's prefix may be another.
    if(NOT PMIXPP_OUT_OF_TREE)
      pmixpp_install_runpath(${target} ${PMIXPP_COMPONENT_INSTALL_DIR})
    endif()
  endif()
  set(PMIXPP_COMPONENT_TARGET ${target} PARENT_SCOPE)
endfunction()

# Generates the table of statically built components and adds it to libpmix.
# Always generates one (possibly empty), because the core refers to it.
function(pmixpp_finalize_static_components)
  if(PMIXPP_OUT_OF_TREE)
    return()
  endif()
  get_property(names GLOBAL PROPERTY PMIXPP_STATIC_COMPONENT_LIST)
  foreach(wanted IN LISTS PMIXPP_COMPONENTS_STATIC)
    if(NOT wanted IN_LIST names)
      message(WARNING "PMIXPP_COMPONENTS_STATIC names ${wanted}, but no component of that name "
                      "was built (misspelt, or also in PMIXPP_COMPONENTS_DISABLE?)")
    endif()
  endforeach()
  set(decls "")
  set(entries "")
  list(LENGTH names count)
  foreach(name IN LISTS names)
    string(FIND "${name}" "_" cut)
    string(SUBSTRING "${name}" 0 ${cut} fw)
    math(EXPR start "${cut} + 1")
    string(SUBSTRING "${name}" ${start} -1 comp)
    string(APPEND decls "extern \"C\" const pmixpp_mca_component_t pmix_mca_${name}_component;\n")
    string(APPEND entries "    {\"${fw}\", \"${comp}\", &pmix_mca_${name}_component},\n")
  endforeach()
  set(out ${PROJECT_BINARY_DIR}/generated/pmixpp_static_components.cpp)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// Generated by pmixpp_finalize_static_components() (cmake/PmixppComponent.cmake):
// the components compiled into libpmix (PMIXPP_COMPONENTS_STATIC). Do not edit.
#include \"mca/static_components.hpp\"

${decls}
namespace pmixpp::mca {

const StaticComponentEntry kStaticComponents[] = {
${entries}    {nullptr, nullptr, nullptr},
};
const std::size_t kStaticComponentCount = ${count};

}  // namespace pmixpp::mca
" @ONLY)
  # Compiled with the MCA layer, whose header it includes.
  target_sources(pmixcore_mca PRIVATE ${out})
endfunction()
