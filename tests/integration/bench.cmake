# Smoke test of rplasma-bench (local mode): runs the real binary, with its own rplasma-store (and
# redis-server when installed), at tiny sizes and iteration counts, and checks the CSV it writes.
rplasma_test(bench_smoke_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_smoke_test.cc
  LABELS integration bench
  TIMEOUT 180)
add_dependencies(bench_smoke_test rplasma-bench rplasma-store rplasma-manager)
