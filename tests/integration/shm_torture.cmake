# The cross-process torture run of gets with no IPC (issue 13): a writer process creating,
# deleting, evicting and re-creating the same ids in a small arena while four reader processes
# get, verify, hold and release them. RPLASMA_TORTURE_SECONDS sets its length (default 10 s).

add_executable(shm_torture_worker ${CMAKE_CURRENT_LIST_DIR}/shm_torture_worker.cc)
target_link_libraries(shm_torture_worker PRIVATE rplasma_client absl::strings absl::time nlohmann_json::nlohmann_json)
set_target_properties(shm_torture_worker PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)

rplasma_test(shm_torture_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/shm_torture_test.cc
  LIBS rplasma_client
  LABELS integration fault
  TIMEOUT 300)
add_dependencies(shm_torture_test rplasma_store shm_torture_worker)
target_compile_definitions(shm_torture_test PRIVATE RPLASMA_SHM_TORTURE_WORKER="$<TARGET_FILE:shm_torture_worker>")
