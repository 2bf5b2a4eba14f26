# Every external dependency of rplasma, found on the system (Debian bookworm packages; see
# third_party/README.md). Nothing is vendored. Each becomes an imported target named below.

find_package(PkgConfig REQUIRED)

# abseil (libabsl-dev): absl::status, absl::statusor, absl::flags, absl::synchronization, ...
find_package(absl REQUIRED CONFIG)

# flatbuffers (libflatbuffers-dev, flatbuffers-compiler): flatbuffers::flatbuffers + flatc.
find_package(FlatBuffers REQUIRED CONFIG)
find_program(FLATC_EXECUTABLE flatc REQUIRED)

# GoogleTest (libgtest-dev, libgmock-dev): GTest::gtest, GTest::gmock.
find_package(GTest REQUIRED)

# nlohmann-json 3.11 (nlohmann-json3-dev, header only): nlohmann_json::nlohmann_json. Tests and the
# benchmark parse the stats JSON the manager writes; product code only writes JSON (json_writer.h).
find_package(nlohmann_json 3 REQUIRED)

# hiredis 0.14 (libhiredis-dev), rdma-core (libibverbs-dev, librdmacm-dev), xxhash (libxxhash-dev):
# no CMake packages of their own, so pkg-config imported targets.
pkg_check_modules(hiredis REQUIRED IMPORTED_TARGET hiredis)
if(RPLASMA_WITH_VERBS)
  pkg_check_modules(ibverbs REQUIRED IMPORTED_TARGET libibverbs)
  pkg_check_modules(rdmacm REQUIRED IMPORTED_TARGET librdmacm)
endif()
pkg_check_modules(xxhash REQUIRED IMPORTED_TARGET libxxhash)

# OpenSSL (libssl-dev): HMAC for peer authentication.
find_package(OpenSSL REQUIRED)

# Open MPI (libopenmpi-dev, openmpi-bin): MPI::MPI_CXX, only for bench-mpi/.
if(RPLASMA_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

# flatbuffers_generate(<target> <schema.fbs>...): a header-only interface library carrying the
# generated *_generated.h files in the build tree. Generated code is never committed.
function(rplasma_flatbuffers_library target)
  set(outputs)
  foreach(schema ${ARGN})
    get_filename_component(abs ${schema} ABSOLUTE)
    get_filename_component(name ${schema} NAME_WE)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/protocol/${name}_generated.h)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${FLATC_EXECUTABLE} --cpp --scoped-enums -o ${CMAKE_CURRENT_BINARY_DIR}/generated/protocol ${abs}
      DEPENDS ${abs} ${FLATC_EXECUTABLE}
      COMMENT "flatc ${name}.fbs"
      VERBATIM)
    list(APPEND outputs ${out})
  endforeach()
  add_custom_target(${target}_gen DEPENDS ${outputs})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE ${CMAKE_CURRENT_BINARY_DIR}/generated)
  target_link_libraries(${target} INTERFACE flatbuffers::flatbuffers)
endfunction()
