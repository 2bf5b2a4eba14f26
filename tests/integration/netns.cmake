# Real network faults: managers in network namespaces joined by veth, nftables rules dropping all or
# a random part of the peer traffic (tests/support/network_namespace.h). Needs root and nftables.
# One executable (netns_integration_test), one ctest test per file.
rplasma_test_executable(netns_integration_test
  LIBS rplasma_manager_test_cluster
  DEPENDS rplasma-manager rplasma_store)
rplasma_test(netns_fault_test IN netns_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/netns_fault_test.cc
  LABELS integration redis fault netns
  TIMEOUT 400)
set_tests_properties(netns_fault_test PROPERTIES COST 100)  # a long run: ctest starts it early

# The automatic protocol switch follows a change of the link: requests shaped to 1 Mbit/s (HTB and
# an nftables priority) between the namespaces mid-run (issue 25). Needs root, HTB and nftables.
rplasma_test(netns_link_change_test IN netns_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/netns_link_change_test.cc
  LABELS integration redis netns
  TIMEOUT 300)
