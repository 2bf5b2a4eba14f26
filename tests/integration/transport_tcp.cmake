# TCP transport integration tests: an owner in a child process (transport_tcp_owner) that the
# test SIGKILLs while Reads stream from it.
add_executable(transport_tcp_owner ${CMAKE_CURRENT_LIST_DIR}/transport_tcp_owner.cc)
target_link_libraries(transport_tcp_owner PRIVATE rplasma_transport_tcp rplasma_test_support)
set_target_properties(transport_tcp_owner PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)

# One executable (transport_tcp_integration_test), one ctest test per file.
rplasma_test_executable(transport_tcp_integration_test
  LIBS rplasma_transport_tcp
  DEPENDS transport_tcp_owner)
target_compile_definitions(transport_tcp_integration_test PRIVATE TRANSPORT_TCP_OWNER="$<TARGET_FILE:transport_tcp_owner>")

rplasma_test(transport_tcp_owner_death_test IN transport_tcp_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/transport_tcp_owner_death_test.cc
  LABELS integration fault
  TIMEOUT 120)

# A flood of silent and garbage unauthenticated connections must not lock out a real peer.
rplasma_test(transport_tcp_handshake_flood_test IN transport_tcp_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/transport_tcp_handshake_flood_test.cc
  LABELS integration fault
  TIMEOUT 120)
