# Manager integration and fault tests: redis-server + real rplasma-store and rplasma-manager
# processes over tcp loopback (tests/integration/manager_test_cluster.h). One executable,
# manager_integration_test, holds them and the tests of network.cmake and observability.cmake;
# each file is its own ctest test.
add_library(rplasma_manager_test_cluster STATIC ${CMAKE_CURRENT_LIST_DIR}/manager_test_cluster.cc)
target_link_libraries(rplasma_manager_test_cluster
  PUBLIC rplasma_test_support rplasma_client rplasma_protocol GTest::gtest
  PRIVATE rplasma_directory)

rplasma_test_executable(manager_integration_test
  LIBS rplasma_manager_test_cluster
  DEPENDS rplasma-manager rplasma_store rplasma_cli_main)

rplasma_test(manager_fetch_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_fetch_test.cc
  LABELS integration redis
  TIMEOUT 900
  SHARDS 3)

rplasma_test(manager_fault_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_fault_test.cc
  LIBS rplasma_peer rplasma_transport_tcp
  LABELS integration redis fault
  TIMEOUT 600
  SHARDS 3)
# The owners killed mid-transfer run the throttled test manager (tests/support).
target_compile_definitions(manager_integration_test PRIVATE THROTTLED_MANAGER="$<TARGET_FILE:throttled-manager>")
add_dependencies(manager_integration_test throttled-manager)

rplasma_test(manager_batch_fetch_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_batch_fetch_test.cc
  LABELS integration redis
  TIMEOUT 600)

rplasma_test(manager_client_socket_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_client_socket_test.cc
  LABELS integration redis fault
  TIMEOUT 300)

rplasma_test(manager_routing_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_routing_test.cc
  LABELS integration redis
  TIMEOUT 300)

rplasma_test(manager_redis_cluster_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_redis_cluster_test.cc
  LABELS integration redis fault
  TIMEOUT 300)
