# The real cuda plugin on a machine without a GPU: it loads (no libcuda or cuBLAS dependency),
# reports no devices with the driver's reason, and asking for cuda fails with that reason.
# Where a GPU is present the no-device checks are skipped (SKIP_REGULAR_EXPRESSION).
set(ENV{KAEL_PLUGINS} "cpu,cuda")

foreach(forbidden "libcuda.so" "libcublas" "libcudart.so")
  execute_process(COMMAND ldd ${PLUGIN} OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR deps MATCHES "${forbidden}" OR deps MATCHES "not found")
    message(FATAL_ERROR "ldd ${PLUGIN} (rc ${rc}) must show no ${forbidden}:\n${deps}")
  endif()
endforeach()
execute_process(COMMAND nm -D --defined-only ${PLUGIN} OUTPUT_VARIABLE symbols)
string(REGEX MATCHALL " [TDBRVWiu] [^\n]+" exported "${symbols}")
if(NOT exported STREQUAL " T kael_plugin_query")
  message(FATAL_ERROR "${PLUGIN} exports [${exported}], expected only kael_plugin_query")
endif()

execute_process(COMMAND ${INFO} --json OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kael-info --json exited with ${rc}:\n${err}")
endif()
string(JSON plugin_count LENGTH "${out}" plugins)
math(EXPR last "${plugin_count} - 1")
set(status "")
foreach(i RANGE ${last})
  string(JSON name GET "${out}" plugins ${i} name)
  if(name STREQUAL "cuda")
    string(JSON status GET "${out}" plugins ${i} status)
    string(JSON reason GET "${out}" plugins ${i} reason)
    string(JSON device_count GET "${out}" plugins ${i} device_count)
    string(JSON kind GET "${out}" plugins ${i} kind)
  endif()
endforeach()
if(status STREQUAL "")
  message(FATAL_ERROR "kael-info --json lists no cuda plugin:\n${out}")
endif()
if(status STREQUAL "loaded")
  message(STATUS "cuda plugin serves ${device_count} device(s): a GPU is here, no-GPU checks skipped")
  return()
endif()
if(NOT status STREQUAL "no devices" OR NOT device_count EQUAL 0 OR reason STREQUAL ""
   OR NOT kind STREQUAL "gpu")
  message(FATAL_ERROR "cuda plugin: status '${status}', ${device_count} devices, kind '${kind}', "
                      "reason '${reason}'")
endif()

execute_process(COMMAND ${INFO} --device cuda OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
string(FIND "${out}${err}" "${reason}" found)
if(NOT rc EQUAL 2 OR found EQUAL -1)
  message(FATAL_ERROR "kael-info --device cuda exited ${rc}, expected 2 with '${reason}':\n"
                      "${out}${err}")
endif()

execute_process(COMMAND ${DEMO} --device cuda OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
string(FIND "${err}" "${reason}" found)
if(rc EQUAL 0 OR found EQUAL -1)
  message(FATAL_ERROR "kael-demo --device cuda exited ${rc}, expected a failure with '${reason}' "
                      "on stderr:\n${err}")
endif()
message(STATUS "cuda plugin: no devices (${reason}); kael-info --device cuda exits 2, "
               "kael-demo --device cuda fails with the reason; no libcuda or cuBLAS linked")
