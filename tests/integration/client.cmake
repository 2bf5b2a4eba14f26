# Client integration tests: the client library and the rplasma CLI against real rplasma-store
# processes, one executable (client_integration_test) and one ctest test per file.
# client_worker is a helper process the fault tests SIGKILL at known points.

add_executable(client_worker ${CMAKE_CURRENT_LIST_DIR}/client_worker.cc)
target_link_libraries(client_worker PRIVATE rplasma_client absl::strings)
set_target_properties(client_worker PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)

rplasma_test_executable(client_integration_test
  LIBS rplasma_client
  DEPENDS rplasma_store client_worker rplasma_cli_main)
target_compile_definitions(client_integration_test PRIVATE RPLASMA_CLIENT_WORKER="$<TARGET_FILE:client_worker>")

foreach(scenario lifecycle subscribe concurrency batch fork cli)
  rplasma_test(client_${scenario}_test IN client_integration_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_${scenario}_test.cc
    LABELS integration
    TIMEOUT 120)
endforeach()

rplasma_test(client_fault_test IN client_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_fault_test.cc
  LABELS integration fault
  TIMEOUT 120)

# The randomized model of the store's state machine (RPLASMA_MODEL_SECONDS, default 20 s;
# RPLASMA_MODEL_SEED replays a run).
rplasma_test(store_model_test IN client_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_model_test.cc
  LABELS integration
  TIMEOUT 300)
set_tests_properties(store_model_test PROPERTIES COST 60)  # 20 s: start it early
