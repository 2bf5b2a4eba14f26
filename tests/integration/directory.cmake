# Integration tests of the Redis directory and of the redis-server test helper (real redis-server).
rplasma_test(directory_redis_server_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/directory_redis_server_test.cc
  LABELS integration redis fault
  TIMEOUT 120)
