# The daemons' command lines, signals, readiness and systemd units (issue 12): runs the built
# rplasma-store, rplasma-manager and rplasma. One executable (daemon_integration_test) with
# manager_daemon_test below; rplasma_manager_test_cluster is declared in manager.cmake (targets
# resolve at generate time).
include(GNUInstallDirs)
rplasma_test_executable(daemon_integration_test
  LIBS rplasma_protocol rplasma_manager_test_cluster
  DEPENDS rplasma_store rplasma-manager rplasma_cli_main)
rplasma_test(daemon_cli_test IN daemon_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/daemon_cli_test.cc
  LABELS integration
  TIMEOUT 120)
target_compile_definitions(daemon_integration_test PRIVATE
  RPLASMA_TEST_PROJECT_VERSION="${PROJECT_VERSION}"
  RPLASMA_TEST_INSTALL_BINDIR="${CMAKE_INSTALL_FULL_BINDIR}"
  RPLASMA_TEST_STORE_UNIT="${CMAKE_BINARY_DIR}/store/rplasma-store.service"
  RPLASMA_TEST_MANAGER_UNIT="${CMAKE_BINARY_DIR}/manager/daemon/rplasma-manager.service")

# The benchmarks' command lines, apart (label bench) so that the sanitizer stages, which run no
# benchmark, need not build them: about a seventh of the ASan build's compile time.
rplasma_test(bench_cli_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_cli_test.cc
  LABELS integration bench
  TIMEOUT 60)
target_compile_definitions(bench_cli_test PRIVATE RPLASMA_TEST_PROJECT_VERSION="${PROJECT_VERSION}")
add_dependencies(bench_cli_test rplasma-bench)
if(RPLASMA_WITH_MPI)
  target_compile_definitions(bench_cli_test PRIVATE RPLASMA_TEST_WITH_MPI)
  add_dependencies(bench_cli_test rplasma-bench-mpi)
endif()

rplasma_test(manager_daemon_test IN daemon_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/manager_daemon_test.cc
  LABELS integration redis
  TIMEOUT 120)
