# Network faults at the transport seam: the requester's manager is faulty-manager
# (tests/support/fault_injecting_transport.h: seeded loss and delay of its peer messages). In
# manager.cmake's executable.
rplasma_test(network_fault_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/network_fault_test.cc
  LABELS integration redis fault
  TIMEOUT 300)
target_compile_definitions(manager_integration_test PRIVATE FAULTY_MANAGER="$<TARGET_FILE:faulty-manager>")
add_dependencies(manager_integration_test faulty-manager)
