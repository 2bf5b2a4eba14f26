# Network faults at the transport seam: the requester's manager is faulty-manager
# (tests/support/fault_injecting_transport.h: seeded loss and delay of its peer messages).
rplasma_test(network_fault_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/network_fault_test.cc
  LIBS rplasma_manager_test_cluster
  LABELS integration redis fault
  TIMEOUT 300)
target_compile_definitions(network_fault_test PRIVATE FAULTY_MANAGER="$<TARGET_FILE:faulty-manager>")
add_dependencies(network_fault_test rplasma-manager rplasma_store faulty-manager)
