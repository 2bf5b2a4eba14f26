# Client integration tests: the client library and the rplasma CLI against real rplasma-store
# processes. client_worker is a helper process the fault tests SIGKILL at known points.

add_executable(client_worker ${CMAKE_CURRENT_LIST_DIR}/client_worker.cc)
target_link_libraries(client_worker PRIVATE rplasma_client absl::strings)
set_target_properties(client_worker PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)

foreach(scenario lifecycle subscribe concurrency batch fork)
  rplasma_test(client_${scenario}_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_${scenario}_test.cc
    LIBS rplasma_client
    LABELS integration
    TIMEOUT 120)
  add_dependencies(client_${scenario}_test rplasma_store)
endforeach()

rplasma_test(client_fault_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_fault_test.cc
  LIBS rplasma_client
  LABELS integration fault
  TIMEOUT 120)
add_dependencies(client_fault_test rplasma_store client_worker)
target_compile_definitions(client_fault_test PRIVATE RPLASMA_CLIENT_WORKER="$<TARGET_FILE:client_worker>")

rplasma_test(client_cli_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_cli_test.cc
  LIBS rplasma_client
  LABELS integration
  TIMEOUT 120)
add_dependencies(client_cli_test rplasma_store rplasma_cli_main)

# The randomized model of the store's state machine (RPLASMA_MODEL_SECONDS, default 20 s;
# RPLASMA_MODEL_SEED replays a run).
rplasma_test(store_model_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_model_test.cc
  LIBS rplasma_client
  LABELS integration
  TIMEOUT 300)
add_dependencies(store_model_test rplasma_store)
set_tests_properties(store_model_test PROPERTIES COST 60)  # 20 s: start it early
