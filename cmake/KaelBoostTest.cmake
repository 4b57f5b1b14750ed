# How the test programs get Boost.Test. By default its shared library (the static one for the
# installed kael-conformance). KAEL_BOOST_TEST_HEADER_ONLY=ON compiles Boost.Test from its headers
# instead (boost/test/included), for a machine with Boost's headers but not the library: the GPU
# machine, where scripts/cuda/build_on_gpu.sh builds the suites this way.
option(KAEL_BOOST_TEST_HEADER_ONLY "Compile Boost.Test from its headers, not its library" OFF)

if(KAEL_BOOST_TEST_HEADER_ONLY)
  find_package(Boost 1.74 REQUIRED)
  # Boost.Test's implementation and main(), compiled once for every test program.
  add_library(kael_boost_test_main STATIC ${CMAKE_CURRENT_LIST_DIR}/boost_test_included.cpp)
  target_link_libraries(kael_boost_test_main PUBLIC Boost::headers)
endif()

# kael_link_boost_test(<target> [NO_MAIN] [STATIC]): <target> gets Boost.Test. NO_MAIN: the
# program calls Boost's runner itself. STATIC: the static library (a program installed without
# Boost's shared library beside it).
function(kael_link_boost_test target)
  cmake_parse_arguments(ARG "NO_MAIN;STATIC" "" "" ${ARGN})
  if(KAEL_BOOST_TEST_HEADER_ONLY)
    if(ARG_NO_MAIN)
      # Its own copy of the implementation, compiled without main().
      target_sources(${target} PRIVATE ${KAEL_BOOST_TEST_INCLUDED_SOURCE})
      target_link_libraries(${target} PRIVATE Boost::headers)
    else()
      target_link_libraries(${target} PRIVATE kael_boost_test_main)
    endif()
  elseif(ARG_STATIC)
    set(Boost_USE_STATIC_LIBS ON)
    find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)
    target_link_libraries(${target} PRIVATE Boost::unit_test_framework)
  else()
    find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)
    target_link_libraries(${target} PRIVATE Boost::unit_test_framework)
    target_compile_definitions(${target} PRIVATE BOOST_TEST_DYN_LINK)
  endif()
  if(ARG_NO_MAIN)
    target_compile_definitions(${target} PRIVATE BOOST_TEST_NO_MAIN)
  endif()
endfunction()
set(KAEL_BOOST_TEST_INCLUDED_SOURCE ${CMAKE_CURRENT_LIST_DIR}/boost_test_included.cpp)
