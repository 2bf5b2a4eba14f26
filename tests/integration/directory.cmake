# Integration tests of the Redis directory and of the redis-server test helper, against a real
# redis-server (each test skips with a message when none is installed): one executable
# (directory_integration_test), one ctest test per file.
rplasma_test_executable(directory_integration_test LIBS rplasma_directory)

rplasma_test(directory_redis_server_test IN directory_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_server_test.cc
  LABELS integration redis fault
  TIMEOUT 120)
rplasma_test(directory_redis_test IN directory_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_test.cc
  LABELS integration redis
  TIMEOUT 120)
rplasma_test(directory_fault_test IN directory_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_fault_test.cc
  LABELS integration redis fault
  TIMEOUT 120)
rplasma_test(directory_garbage_test IN directory_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_garbage_test.cc
  LABELS integration redis
  TIMEOUT 120)
rplasma_test(directory_redis_cluster_test IN directory_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_cluster_test.cc
  LABELS integration redis fault
  TIMEOUT 120)
