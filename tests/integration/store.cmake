# Store integration and fault tests: a real rplasma-store process spoken to over the raw protocol,
# one executable (store_integration_test) and one ctest test per scenario.
rplasma_test_executable(store_integration_test
  LIBS rplasma_protocol flatbuffers::flatbuffers
  DEPENDS rplasma_store)

rplasma_test(store_protocol_test IN store_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_protocol_test.cc ${CMAKE_CURRENT_LIST_DIR}/store_subscription_test.cc
          ${CMAKE_CURRENT_LIST_DIR}/store_batch_protocol_test.cc
  LABELS integration
  TIMEOUT 120)

rplasma_test(store_fault_test IN store_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_fault_test.cc
  LABELS integration fault
  TIMEOUT 240)

rplasma_test(store_one_round_trip_test IN store_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_one_round_trip_test.cc
  LABELS integration
  TIMEOUT 60)
