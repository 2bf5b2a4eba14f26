# Observability over real processes: `rplasma stats --manager`, and the /metrics endpoints of
# rplasma-store and rplasma-manager checked by promtool (tests/integration/observability_test.cc).
rplasma_test(observability_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/observability_test.cc
  LIBS rplasma_manager_test_cluster
  LABELS integration redis
  TIMEOUT 300)
add_dependencies(observability_test rplasma-manager rplasma_store rplasma_cli_main)
