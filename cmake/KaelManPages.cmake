# Man pages of the installed tools, written by help2man from each tool's --help and --version
# at build time (so they always match the tool) and installed with the tool's component.
# Without help2man, or in sanitizer builds (never packaged), there are none; the Debian
# packages' lintian test then fails naming the tool.
find_program(KAEL_HELP2MAN help2man)
if(NOT KAEL_HELP2MAN AND NOT KAEL_SANITIZE)
  message(STATUS "kael: no help2man; the tools get no man pages (apt-get install help2man)")
endif()

# kael_man_page(<target> <component> <one line: what the tool does>)
function(kael_man_page target component summary)
  if(NOT KAEL_HELP2MAN OR KAEL_SANITIZE OR CMAKE_CROSSCOMPILING)
    return()
  endif()
  set(page ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_MANDIR}/man1/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_MANDIR}/man1
    # No plugin variables of the caller's environment may show up in the page.
    COMMAND ${CMAKE_COMMAND} -E env --unset=KAEL_PLUGIN_PATH --unset=KAEL_PLUGINS
            ${KAEL_HELP2MAN} --no-info --no-discard-stderr --section=1 "--name=${summary}"
            --output=${page} $<TARGET_FILE:${target}>
    DEPENDS ${target}
    COMMENT "kael: man page of ${target} (help2man)" VERBATIM)
  add_custom_target(${target}_man_page ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endfunction()
