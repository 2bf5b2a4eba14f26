# Observability over real processes: `rplasma stats --manager`, and the /metrics endpoints of
# rplasma-store and rplasma-manager checked by promtool (tests/integration/observability_test.cc).
# In manager.cmake's executable.
rplasma_test(observability_test IN manager_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/observability_test.cc
  LABELS integration redis
  TIMEOUT 300)
