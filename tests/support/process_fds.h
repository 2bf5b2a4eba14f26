// CountOpenFdsOf: the number of open fds of another process (/proc/<pid>/fd), for leak audits of
// the stores and managers a test started.
#ifndef RPLASMA_TESTS_SUPPORT_PROCESS_FDS_H_
#define RPLASMA_TESTS_SUPPORT_PROCESS_FDS_H_

#include <sys/types.h>

#include <string>

#include "bench-mpi/launch/child_process.h"

namespace rplasma::testing {

// -1 if the process is gone or its fd table cannot be read (the launcher's, bench-mpi/launch).
using ::rplasma::bench::CountOpenFdsOf;

// "fd -> target" per open fd, one a line (sockets as socket:[inode]), to say what a leak is.
std::string DescribeOpenFdsOf(pid_t pid);

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_PROCESS_FDS_H_
