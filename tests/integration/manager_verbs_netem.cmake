# tc netem delay and loss between two managers over verbs (label rdma-guest, NOT integration): each
# manager on its own rxe device at one end of a veth pair the test sets up (verbs_veth_link.h).
# Needs root and a verbs device: skips elsewhere; tests/rdma-vm's rdma_vm_suite runs it in the guest.
if(RPLASMA_GUEST_TESTS)
  rplasma_test(manager_verbs_netem_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_verbs_netem_test.cc
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    LABELS rdma-guest
    TIMEOUT 600)
  add_dependencies(manager_verbs_netem_test rplasma-manager rplasma_store)
endif()
