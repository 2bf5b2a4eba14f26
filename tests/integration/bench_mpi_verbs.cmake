# rplasma-bench-mpi over verbs (label rdma-guest, NOT integration): `mpirun -np 2` with the managers
# on the RDMA device, all three protocols with every byte verified, and a tuner run whose threshold
# file two fresh managers load and use. Skips without an RDMA device and its address; tests/rdma-vm's
# rdma_vm_suite (label rdma) runs it inside a Soft-RoCE QEMU guest. rplasma_manager_test_cluster is
# declared in manager.cmake (targets resolve at generate time).
if(RPLASMA_GUEST_TESTS AND RPLASMA_WITH_MPI)
  rplasma_test(bench_mpi_verbs_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_verbs_test.cc
    LIBS rplasma_manager_test_cluster rplasma_transport_verbs
    LABELS rdma-guest
    TIMEOUT 600)
  add_dependencies(bench_mpi_verbs_test rplasma-bench-mpi rplasma-store rplasma-manager)
endif()
