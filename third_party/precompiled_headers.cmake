# Every static library of the product reuses one precompiled header (library_pch.h: the standard
# library's and abseil's headers most of its files include), built once per build by
# rplasma_library_pch. Parsing them was a third to a half of a library file's compile time in the
# ASan build. The host is a static library so that the header is compiled with the libraries' own
# flags (-fPIC; the optimization level of the build type). Tests have their own
# (tests/support/test_pch.h). -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DRPLASMA_UNITY_BUILD=OFF builds
# without both, each file alone, which shows a file that forgot an include.
set(RPLASMA_LIBRARY_PCH_DIR ${CMAKE_CURRENT_LIST_DIR})

# rplasma_library_pch_host(<name> [<compile option>...]): a host that compiles library_pch.h once,
# with the libraries' flags plus the options given.
function(rplasma_library_pch_host name)
  add_library(${name} STATIC ${RPLASMA_LIBRARY_PCH_DIR}/library_pch_host.cc)
  target_compile_options(${name} PRIVATE ${ARGN})
  target_precompile_headers(${name} PRIVATE ${RPLASMA_LIBRARY_PCH_DIR}/library_pch.h)
endfunction()

rplasma_library_pch_host(rplasma_library_pch)

# rplasma_reuse_library_pch(<dir>): every static or object library defined in <dir> or below that
# compiles a file of its own reuses rplasma_library_pch.
function(rplasma_reuse_library_pch dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(sources ${target} SOURCES)
    if(type MATCHES "^(STATIC|OBJECT)_LIBRARY$" AND sources MATCHES "\\.cc(;|$)")
      target_precompile_headers(${target} REUSE_FROM rplasma_library_pch)
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    rplasma_reuse_library_pch(${subdirectory})
  endforeach()
endfunction()

# rplasma_library_pch_variant(<name> OPTIONS <flag>... TARGETS <library>...): libraries compiled
# with a flag that changes what clang accepts from a precompiled header (tests/fuzz: libFuzzer's
# -fsanitize=fuzzer-no-link) reuse a second host, <name>, compiled with the same flags.
function(rplasma_library_pch_variant name)
  cmake_parse_arguments(V "" "" "OPTIONS;TARGETS" ${ARGN})
  rplasma_library_pch_host(${name} ${V_OPTIONS})
  foreach(target IN LISTS V_TARGETS)
    set_property(TARGET ${target} PROPERTY PRECOMPILE_HEADERS_REUSE_FROM ${name})
  endforeach()
endfunction()
