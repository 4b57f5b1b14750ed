cmake_minimum_required(VERSION 3.25)
# kael-info with files that must never reach the loader (a truncated library, a FIFO, a folder),
# a regular file on KAEL_PLUGIN_PATH, blanks and an unknown name in KAEL_PLUGINS, KAEL_CPU_BLAS
# naming a FIFO, and --device for a type that does not exist. Every run has a timeout: a hang
# fails the test. -DINFO=<kael-info> -DDIR=<folder of make_unloadable_plugins.cmake> -DNAMES=...
function(run_info)
  cmake_parse_arguments(ARG "" "EXPECT" "ARGS" ${ARGN})
  execute_process(COMMAND ${INFO} ${ARG_ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc TIMEOUT 30)
  if(NOT "${rc}" STREQUAL "${ARG_EXPECT}")
    message(FATAL_ERROR "kael-info ${ARG_ARGS}: exit '${rc}', expected ${ARG_EXPECT}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(require_match text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: no match for '${pattern}' in:\n${text}")
  endif()
endfunction()

set(ENV{KAEL_PLUGIN_PATH} "${DIR}:${DIR}/not_a_folder")
set(ENV{KAEL_PLUGINS} "${NAMES}")
run_info(ARGS --json EXPECT 0)
string(JSON count LENGTH "${out}" plugins)
math(EXPR last "${count} - 1")
set(statuses "")
foreach(i RANGE ${last})
  string(JSON name GET "${out}" plugins ${i} name)
  string(JSON status GET "${out}" plugins ${i} status)
  string(JSON reason GET "${out}" plugins ${i} reason)
  list(APPEND statuses "${name}=${status}")
  if(name MATCHES "^(truncated|short_tail|tiny|fifo|fifo_link|folder)$")
    if(NOT status STREQUAL "load error" OR reason STREQUAL "")
      message(FATAL_ERROR "${name}: status '${status}', reason '${reason}'")
    endif()
  endif()
  if(name STREQUAL "truncated")
    require_match("${reason}" "truncated or corrupt ELF file" "truncated")
  elseif(name STREQUAL "fifo")
    require_match("${reason}" "is a FIFO, not a regular file" "fifo")
  elseif(name STREQUAL "no_such_plugin" AND NOT status STREQUAL "not found")
    message(FATAL_ERROR "no_such_plugin: status '${status}'")
  endif()
endforeach()
foreach(expected cpu=loaded truncated=load\ error fifo=load\ error folder=load\ error
                 no_such_plugin=not\ found)
  if(NOT expected IN_LIST statuses)
    message(FATAL_ERROR "kael-info did not list ${expected}: ${statuses}")
  endif()
endforeach()
string(JSON folder GET "${out}" search 1 folder)
string(JSON reason GET "${out}" search 1 reason)
if(NOT folder STREQUAL "${DIR}/not_a_folder")
  message(FATAL_ERROR "second search step is ${folder}")
endif()
require_match("${reason}" "is a regular file, not a folder" "search step")

# The text output names all of it without --verbose.
run_info(EXPECT 0)
require_match("${out}" "not_a_folder  \\[KAEL_PLUGIN_PATH\\]  is a regular file, not a folder"
              "text output")
require_match("${out}" "no_such_plugin +not found" "text output")
require_match("${out}" "reason: [^\n]*kael_plugin_fifo.so: is a FIFO" "text output")

# The README's exit codes: 2 when a --device asked for is missing, also one that cannot exist.
unset(ENV{KAEL_PLUGIN_PATH})
set(ENV{KAEL_PLUGINS} cpu)
run_info(ARGS --device cpu EXPECT 0)
run_info(ARGS --device tpu EXPECT 2)
require_match("${err}" "--device tpu: invalid device 'tpu'" "--device tpu")
run_info(ARGS --device cuda:x EXPECT 2)
run_info(ARGS --device cuda:7 EXPECT 2)

# KAEL_CPU_BLAS naming a FIFO or a truncated library: the cpu plugin says why and uses its loops.
foreach(blas fifo truncated)
  set(ENV{KAEL_CPU_BLAS} ${DIR}/kael_plugin_${blas}.so)
  run_info(ARGS --verbose EXPECT 0)
  require_match("${out}" "blas=none found, kael's own loops \\([^\n]*kael_plugin_${blas}.so: "
                "KAEL_CPU_BLAS=${blas}")
endforeach()
