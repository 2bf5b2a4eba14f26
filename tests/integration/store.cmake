# Store integration and fault tests: a real rplasma-store process spoken to over the raw protocol.
rplasma_test(store_protocol_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_protocol_test.cc ${CMAKE_CURRENT_LIST_DIR}/store_subscription_test.cc
          ${CMAKE_CURRENT_LIST_DIR}/store_batch_protocol_test.cc
  LIBS rplasma_protocol
  LABELS integration
  TIMEOUT 120)
add_dependencies(store_protocol_test rplasma_store)

rplasma_test(store_fault_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_fault_test.cc
  LIBS rplasma_protocol flatbuffers::flatbuffers
  LABELS integration fault
  TIMEOUT 240)
add_dependencies(store_fault_test rplasma_store)

rplasma_test(store_one_round_trip_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_one_round_trip_test.cc
  LIBS rplasma_protocol
  LABELS integration
  TIMEOUT 60)
add_dependencies(store_one_round_trip_test rplasma_store)
