# rplasma-bench-mpi under mpirun on this machine (oversubscribed; as root in CI): every pattern and
# protocol at small sizes with every byte verified, CSV and PNG produced (-np 2 and -np 4), and a
# tuner run whose threshold file a manager then loads. Each test starts its own redis-server
# (--start-redis) and skips when mpirun or redis-server is missing.
# One executable (bench_mpi_run_test), one ctest test per file.
if(RPLASMA_WITH_MPI)
  rplasma_test_executable(bench_mpi_run_test DEPENDS rplasma-bench-mpi rplasma-store rplasma-manager)
  rplasma_test(bench_mpi_patterns_test IN bench_mpi_run_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_patterns_test.cc
    LABELS integration mpi redis
    TIMEOUT 240)
  rplasma_test(bench_mpi_tuner_test IN bench_mpi_run_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_tuner_test.cc
    LABELS integration mpi redis
    TIMEOUT 240)
endif()

# Without mpirun, in one executable (bench_mpi_offline_test) apart from the runs above, so that the
# stages that run no mpi test do not build the benchmark: the plot (scripts/plot-bench.sh,
# bench-mpi/mpi/plot_bench.gp) on hand-written CSVs, gnuplot only; and the pure parts (cost fit,
# plans, byte pattern, options) in process, where the rendered threshold file goes through the
# manager's own parser.
if(RPLASMA_WITH_MPI)
  rplasma_test_executable(bench_mpi_offline_test LIBS rplasma_bench_mpi_core rplasma_fetch)
  rplasma_test(bench_mpi_plot_test IN bench_mpi_offline_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_plot_test.cc
    LABELS integration
    TIMEOUT 60)
  rplasma_test(bench_mpi_core_test IN bench_mpi_offline_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_core_test.cc
    LABELS unit
    TIMEOUT 60)
endif()

# ChildProcess (bench-mpi/launch) with real processes: logs, exec errors, and PR_SET_PDEATHSIG.
rplasma_test(bench_mpi_child_process_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_child_process_test.cc
  LIBS rplasma_bench_common
  LABELS integration
  TIMEOUT 60)
