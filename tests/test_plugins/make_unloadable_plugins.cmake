cmake_minimum_required(VERSION 3.25)
# Run as a CTest fixture, so the FIFO is made at test time (a FIFO in the build tree would hang
# any tool that reads it): files named like plugins that must never reach the loader.
#   -DDIR=<folder to (re)create> -DLIBRARY=<a real shared library to truncate>
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc TIMEOUT 30)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${ARGN}' failed: ${rc}")
  endif()
endfunction()
# The segments the program headers name now lie past the end of the file: dlopen maps them, and
# touching those pages is SIGBUS.
run(head -c 100000 ${LIBRARY} OUTPUT_FILE ${DIR}/kael_plugin_truncated.so)
# Only the last bytes missing: every segment is whole, the section header table at the end is not.
file(SIZE ${LIBRARY} size)
math(EXPR without_tail "${size} - 16")
run(head -c ${without_tail} ${LIBRARY} OUTPUT_FILE ${DIR}/kael_plugin_short_tail.so)
# Shorter than an ELF header.
run(head -c 40 ${LIBRARY} OUTPUT_FILE ${DIR}/kael_plugin_tiny.so)
run(mkfifo ${DIR}/kael_plugin_fifo.so)
file(CREATE_LINK ${DIR}/kael_plugin_fifo.so ${DIR}/kael_plugin_fifo_link.so SYMBOLIC)
file(MAKE_DIRECTORY ${DIR}/kael_plugin_folder.so)
# A regular file, for a KAEL_PLUGIN_PATH entry that is not a folder.
file(WRITE ${DIR}/not_a_folder "a regular file\n")
