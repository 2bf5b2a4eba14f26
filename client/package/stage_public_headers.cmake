# cmake -DSOURCE_DIR=<repo> -DOUTPUT_DIR=<dir> -DHEADERS="client/client.h;..." -DENTRY=<file> -P stage_public_headers.cmake
#
# Copies the public header set into OUTPUT_DIR/rplasma/, keeping each header's path from the
# repository root, and rewrites the project includes to match: "client/x.h" becomes
# "rplasma/client/x.h", "protocol/base/y.h" becomes "rplasma/protocol/base/y.h". ENTRY is copied as
# OUTPUT_DIR/rplasma/client.h (what applications include). A consumer then needs only the
# installed include dir (plus abseil's).
#
# The set must be closed: a public header that includes a project header outside HEADERS fails
# the build here, naming both, instead of producing an installed tree that does not compile.

cmake_minimum_required(VERSION 3.25)

foreach(var SOURCE_DIR OUTPUT_DIR HEADERS ENTRY)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "stage_public_headers.cmake: -D${var}=... is required")
  endif()
endforeach()

set(include_pattern "#include \"((client|protocol)/[^\"]+)\"")

function(stage source destination)
  file(READ ${source} text)
  string(REGEX MATCHALL "${include_pattern}" includes "${text}")
  foreach(line ${includes})
    string(REGEX REPLACE "${include_pattern}" "\\1" included "${line}")
    if(NOT included IN_LIST HEADERS)
      message(FATAL_ERROR "${source} includes ${included}, which is not in the public header set "
                          "(client/package/CMakeLists.txt, rplasma_public_headers): add it there or drop the include")
    endif()
  endforeach()
  string(REGEX REPLACE "${include_pattern}" "#include \"rplasma/\\1\"" text "${text}")
  file(WRITE ${destination} "${text}")
endfunction()

foreach(header ${HEADERS})
  stage(${SOURCE_DIR}/${header} ${OUTPUT_DIR}/rplasma/${header})
endforeach()
stage(${ENTRY} ${OUTPUT_DIR}/rplasma/client.h)
