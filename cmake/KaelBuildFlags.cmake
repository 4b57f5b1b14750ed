# Debian's hardening flags (what `DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags` gives
# on amd64) and debug information, which the Debian packages move into their -dbgsym packages.
# On for every build so that the tested binaries are the shipped ones; off under the sanitizers
# (ASan replaces the fortified functions) and, for _FORTIFY_SOURCE, in unoptimised builds
# (glibc rejects it without optimisation).
include(CheckCXXCompilerFlag)
option(KAEL_HARDENING "Build with Debian's hardening flags (fortify, stack protector, relro/now)" ON)
option(KAEL_DEBUG_INFO "Build with -g (the Debian packages strip it into -dbgsym packages)" ON)

set(KAEL_HOST_HARDENING_FLAGS)  # also given to nvcc's host compiler by the cuda plugin
if(KAEL_HARDENING AND NOT KAEL_SANITIZE)
  list(APPEND KAEL_HOST_HARDENING_FLAGS -fstack-protector-strong -fstack-clash-protection
       -Wformat -Werror=format-security)
  check_cxx_compiler_flag(-fcf-protection kael_has_cf_protection)
  if(kael_has_cf_protection)
    list(APPEND KAEL_HOST_HARDENING_FLAGS -fcf-protection)
  endif()
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    list(APPEND KAEL_HOST_HARDENING_FLAGS -D_FORTIFY_SOURCE=2)
  endif()
  add_compile_options(${KAEL_HOST_HARDENING_FLAGS})
  # Full RELRO: the GOT is read-only once the loader has bound every symbol at start.
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
if(KAEL_DEBUG_INFO AND NOT CMAKE_BUILD_TYPE MATCHES "Debug|RelWithDebInfo")
  add_compile_options(-g)
endif()
