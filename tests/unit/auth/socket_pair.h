// A connected pair of Unix stream sockets for the auth tests: one end plays the client, the
// other the server. If socketpair fails, the test fails and both ends are -1.
#ifndef RPLASMA_TESTS_UNIT_AUTH_SOCKET_PAIR_H_
#define RPLASMA_TESTS_UNIT_AUTH_SOCKET_PAIR_H_

#include <sys/socket.h>

#include <gtest/gtest.h>

#include "protocol/base/unique_fd.h"

namespace rplasma::auth {

struct SocketPair {
  UniqueFd client;
  UniqueFd server;
};

inline SocketPair MakeSocketPair() {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace rplasma::auth

#endif  // RPLASMA_TESTS_UNIT_AUTH_SOCKET_PAIR_H_
