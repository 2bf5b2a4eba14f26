# rplasma-bench-mpi under mpirun on this machine (oversubscribed; as root in CI): every pattern and
# protocol at small sizes with every byte verified, CSV and PNG produced (-np 2 and -np 4), and a
# tuner run whose threshold file a manager then loads. Each test starts its own redis-server
# (--start-redis) and skips when mpirun or redis-server is missing.
if(RPLASMA_WITH_MPI)
  rplasma_test(bench_mpi_patterns_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_patterns_test.cc
    LABELS integration mpi redis
    TIMEOUT 240)
  rplasma_test(bench_mpi_tuner_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_tuner_test.cc
    LABELS integration mpi redis
    TIMEOUT 240)
  foreach(test bench_mpi_patterns_test bench_mpi_tuner_test)
    add_dependencies(${test} rplasma-bench-mpi rplasma-store rplasma-manager)
  endforeach()
endif()

# The plot (scripts/plot-bench.sh, bench-mpi/mpi/plot_bench.gp) on hand-written CSVs: gnuplot only,
# no MPI run.
if(RPLASMA_WITH_MPI)
  rplasma_test(bench_mpi_plot_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_plot_test.cc
    LABELS integration
    TIMEOUT 60)
endif()

# The pure parts (cost fit, plans, byte pattern, options): in process, no MPI. The rendered
# threshold file goes through the manager's own parser.
if(RPLASMA_WITH_MPI)
  rplasma_test(bench_mpi_core_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_core_test.cc
    LIBS rplasma_bench_mpi_core rplasma_fetch
    LABELS unit
    TIMEOUT 60)
endif()

# ChildProcess (bench-mpi/launch) with real processes: logs, exec errors, and PR_SET_PDEATHSIG.
rplasma_test(bench_mpi_child_process_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_child_process_test.cc
  LIBS rplasma_bench_common
  LABELS integration
  TIMEOUT 60)
