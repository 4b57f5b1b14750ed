# kael_add_plugin(<name> SOURCES ... [LIBRARIES ...] [OUTPUT_DIRECTORY dir] [NO_INSTALL]
#                 [NO_VERSION_SCRIPT] [COMPONENT component])
# Declares a device plugin: a MODULE library named kael_plugin_<name>.so with hidden visibility,
# linked only against plugin_api (plus the given libraries), exporting only kael_plugin_query.
# Used by kael's own tree and, installed with kael-dev, by find_package(kael) for third-party
# plugins (docs/plugins.md). The version script lies next to this file.
set(KAEL_PLUGIN_VERSION_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/plugin.map")
if(NOT DEFINED KAEL_PLUGIN_SUBDIR AND DEFINED kael_PLUGIN_INSTALL_DIR)
  # Out of tree, through find_package(kael): kael's own plugin folder below the prefix
  # (lib/<multiarch>/kael/plugins), so a package with prefix /usr lands in the fixed folder.
  set(KAEL_PLUGIN_SUBDIR ${kael_PLUGIN_INSTALL_DIR})
elseif(NOT DEFINED KAEL_PLUGIN_SUBDIR)
  include(GNUInstallDirs)
  set(KAEL_PLUGIN_SUBDIR ${CMAKE_INSTALL_LIBDIR}/kael/plugins)
endif()
function(kael_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL;NO_VERSION_SCRIPT" "OUTPUT_DIRECTORY;COMPONENT" "SOURCES;LIBRARIES" ${ARGN})
  set(target kael_plugin_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${KAEL_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME kael_plugin_${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN")
  target_link_libraries(${target} PRIVATE kael::plugin_api ${ARG_LIBRARIES})
  # The version script keeps every symbol but the entry local, static libraries' included.
  if(NOT ARG_NO_VERSION_SCRIPT)
    target_link_options(${target} PRIVATE
      "LINKER:--version-script=${KAEL_PLUGIN_VERSION_SCRIPT}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${KAEL_PLUGIN_VERSION_SCRIPT})
  endif()
  # Sanitizer runtimes are resolved from the executable, so undefined symbols are allowed there.
  if(NOT KAEL_SANITIZE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(NOT ARG_NO_INSTALL)
    if(NOT ARG_COMPONENT)
      set(ARG_COMPONENT ${name})
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION ${KAEL_PLUGIN_SUBDIR} COMPONENT ${ARG_COMPONENT})
  endif()
endfunction()
