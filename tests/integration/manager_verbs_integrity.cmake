# Integrity sweep over verbs, 1 B to 64 MiB, through both fetch paths (label rdma-guest, NOT
# integration): skips without an RDMA device; tests/rdma-vm's rdma_vm_suite runs it in the guest.
if(RPLASMA_GUEST_TESTS)
  rplasma_test(manager_verbs_integrity_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_integrity_test.cc
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    LABELS rdma-guest
    TIMEOUT 600)
  add_dependencies(manager_verbs_integrity_test rplasma-manager rplasma_store)
endif()
