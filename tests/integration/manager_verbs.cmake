# The full stack over verbs (label rdma-guest, NOT integration): redis-server, two real stores and
# two real rplasma-managers with --transport verbs. Skips without an RDMA device; tests/rdma-vm's
# rdma_vm_suite (label rdma) runs it inside a Soft-RoCE guest. One executable
# (manager_verbs_integration_test), one ctest test per file.
if(RPLASMA_GUEST_TESTS)
  rplasma_test_executable(manager_verbs_integration_test
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    DEPENDS rplasma-manager rplasma_store)
  rplasma_test(manager_verbs_test IN manager_verbs_integration_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_test.cc
    LABELS rdma-guest
    TIMEOUT 300)

  # Deletes, evictions and re-creations under RDMA READs; a fetcher killed mid-READ.
  rplasma_test(manager_verbs_torture_test IN manager_verbs_integration_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_torture_test.cc
    LABELS rdma-guest
    TIMEOUT 600)

  # Integrity sweep, 1 B to 64 MiB, through both fetch paths.
  rplasma_test(manager_verbs_integrity_test IN manager_verbs_integration_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_integrity_test.cc
    LABELS rdma-guest
    TIMEOUT 600)

  # tc netem delay and loss between the two managers: each on its own rxe device at one end of a
  # veth pair the test sets up (verbs_veth_link.h). Needs root.
  rplasma_test(manager_verbs_netem_test IN manager_verbs_integration_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_netem_test.cc
    LABELS rdma-guest
    TIMEOUT 600)
endif()
