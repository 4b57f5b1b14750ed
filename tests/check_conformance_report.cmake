# kael-conformance as a user runs it: the per-case fallback report on the old_minor test plugin
# (no kernel slots; found through --plugin-path alone), in text and in JSON; the cpu device;
# --list and --filter; exit status 2 with the reason when nothing can be compared.
# -DCONFORMANCE=<kael-conformance> -DOLD_MINOR=<old_minor plugin folder> -DSCRATCH=<folder>
file(REMOVE_RECURSE ${SCRATCH})
file(MAKE_DIRECTORY ${SCRATCH})

# conformance(<plugins> <args>...): runs it with KAEL_PLUGINS=<plugins> and no other kael
# variable; sets out (stdout and stderr) and status.
macro(conformance plugins)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=KAEL_PLUGIN_PATH
                          --unset=KAEL_TEST_DEVICE KAEL_PLUGINS=${plugins} ${CONFORMANCE} ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE status)
endmacro()

# expect(<what failed> <condition>...): the condition as if() takes it.
function(expect what)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "kael-conformance: ${what}; its output:\n${out}")
  endif()
endfunction()

function(expect_status wanted)
  if(NOT status EQUAL wanted)
    message(FATAL_ERROR "kael-conformance ${ARGN} exited ${status}, not ${wanted}:\n${out}")
  endif()
endfunction()

# Three cases: one whose calls all stay on the plugin (random values are drawn on the host) and
# two with fallbacks of their own slots; counts are reset between cases, so neither lists the
# other's.
set(cases random_factories_follow_the_seed:matmul_shapes_layouts_dtypes:cumsum_of_few_long_rows)
conformance(cpu,old_minor --device cuda:0 --plugin-path ${OLD_MINOR} --run_test=${cases}
            --json ${SCRATCH}/old_minor.json)
expect_status(0 "on old_minor")
string(REGEX MATCH "ok +random_factories_follow_the_seed [^\n]* all on the plugin\n" on_plugin "${out}")
expect("random_factories is not all on the plugin" on_plugin)
# cumsum in six dtypes; the plugin, of ABI 1.0, never sees bfloat16 or float16, whose twins the
# cpu plugin converts.
string(REGEX MATCH "ok +cumsum_of_few_long_rows [^\n]* cpu fallback: convert x30, cumsum x18\n"
       cumsum "${out}")
expect("cumsum_of_few_long_rows does not list convert x30 and cumsum x18 alone" cumsum)
string(REGEX MATCH "3 cases on cuda:0 \\(plugin old_minor 0\\.0\\.9\\): 1 ran on the plugin, 2 used the cpu fallback for: [^\n]*; 0 failed"
       summary "${out}")
expect("no summary line naming the fallbacks" summary)

file(READ ${SCRATCH}/old_minor.json json)
string(JSON plugin GET "${json}" plugin name)
string(JSON abi GET "${json}" plugin abi)
string(JSON case_count LENGTH "${json}" cases)
expect("JSON names plugin '${plugin}' ABI ${abi}, ${case_count} cases"
       plugin STREQUAL old_minor AND abi STREQUAL 1.0 AND case_count EQUAL 3)
set(matmul_calls 0)
math(EXPR last "${case_count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" cases ${i} name)
  string(JSON passed GET "${json}" cases ${i} passed)
  string(JSON on_plugin GET "${json}" cases ${i} on_plugin)
  string(JSON slot_count LENGTH "${json}" cases ${i} fallback)
  set(slots)
  if(slot_count GREATER 0)
    math(EXPR last_slot "${slot_count} - 1")
    foreach(j RANGE ${last_slot})
      string(JSON slot MEMBER "${json}" cases ${i} fallback ${j})
      list(APPEND slots ${slot})
    endforeach()
  endif()
  set(wanted_slots)
  if(name STREQUAL matmul_shapes_layouts_dtypes)
    set(wanted_slots convert matmul)
    string(JSON matmul_calls GET "${json}" cases ${i} fallback matmul)
  elseif(name STREQUAL cumsum_of_few_long_rows)
    set(wanted_slots convert cumsum)
  endif()
  list(JOIN slots "," slots)
  list(JOIN wanted_slots "," wanted)
  expect("case ${name}: passed ${passed}, fallback slots '${slots}', not '${wanted}'"
         passed AND slots STREQUAL wanted)
  if(wanted_slots)
    expect("case ${name} has fallbacks but on_plugin ${on_plugin}" NOT on_plugin)
  else()
    expect("case ${name} has no fallback but on_plugin ${on_plugin}" on_plugin)
  endif()
endforeach()
string(JSON on_plugin GET "${json}" summary on_plugin)
string(JSON with_fallback GET "${json}" summary used_fallback)
string(JSON total_matmul GET "${json}" summary fallback matmul)
expect("JSON summary: ${on_plugin} on the plugin, ${with_fallback} with fallback, matmul x${total_matmul} (the case: ${matmul_calls})"
       on_plugin EQUAL 1 AND with_fallback EQUAL 2 AND total_matmul EQUAL matmul_calls AND matmul_calls GREATER 0)

# The cpu device: everything runs on its own plugin.
conformance(cpu --device cpu --filter cumsum_of_few_long_rows)
expect_status(0 "--device cpu")
string(REGEX MATCH "1 case on cpu \\(plugin cpu [^)]*\\): 1 ran on the plugin, 0 used the cpu fallback; 0 failed"
       summary "${out}")
expect("no cpu summary line" summary)

# --list, with and without --filter; a filter that keeps nothing.
conformance(cpu --list)
expect_status(0 "--list")
string(REGEX MATCHALL "[a-z_]+\n" listed "${out}")
list(LENGTH listed listed_count)
expect("--list printed ${listed_count} names" listed_count GREATER 20)
conformance(cpu --list --filter attention)
string(REGEX MATCHALL "[a-z_]+\n" listed "${out}")
list(LENGTH listed listed_count)
expect("--list --filter attention printed ${listed_count} names" listed_count EQUAL 5)
conformance(cpu --filter no_such_case)
expect_status(2 "--filter no_such_case")

# Nothing to compare: no plugin serves the device, an invalid name, an unwritable --json.
conformance(cpu)
expect_status(2 "without a device")
string(FIND "${out}" "nothing was compared: device cuda:0 is not available" reason)
expect("no reason given for the missing device" reason GREATER -1)
conformance(cpu --device cuda:x)
expect_status(2 "--device cuda:x")
conformance(cpu --device cpu --json ${SCRATCH}/no/such/folder/report.json)
expect_status(2 "--json into a missing folder")
message(STATUS "kael-conformance reports fallbacks per case and exits 2 when it cannot compare")
