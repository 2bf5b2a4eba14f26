# Integration tests of the Redis directory and of the redis-server test helper, against a real
# redis-server (each test skips with a message when none is installed).
rplasma_test(directory_redis_server_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_server_test.cc
  LABELS integration redis fault
  TIMEOUT 120)
rplasma_test(directory_redis_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_test.cc
  LIBS rplasma_directory
  LABELS integration redis
  TIMEOUT 120)
rplasma_test(directory_fault_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_fault_test.cc
  LIBS rplasma_directory
  LABELS integration redis fault
  TIMEOUT 120)
rplasma_test(directory_garbage_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_garbage_test.cc
  LIBS rplasma_directory
  LABELS integration redis
  TIMEOUT 120)
rplasma_test(directory_redis_cluster_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_cluster_test.cc
  LIBS rplasma_directory
  LABELS integration redis fault
  TIMEOUT 120)
