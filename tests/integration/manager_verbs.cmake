# The full stack over verbs (label rdma-guest, NOT integration): redis-server, two real stores and
# two real rplasma-managers with --transport verbs. Skips without an RDMA device; tests/rdma-vm's
# rdma_vm_suite (label rdma) runs it inside a Soft-RoCE QEMU guest.
if(RPLASMA_GUEST_TESTS)
  rplasma_test(manager_verbs_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_test.cc
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    LABELS rdma-guest
    TIMEOUT 300)
  add_dependencies(manager_verbs_test rplasma-manager rplasma_store)

  # Deletes, evictions and re-creations under RDMA READs; a fetcher killed mid-READ.
  rplasma_test(manager_verbs_torture_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_torture_test.cc
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    LABELS rdma-guest
    TIMEOUT 600)
  add_dependencies(manager_verbs_torture_test rplasma-manager rplasma_store)
endif()
