// Open fds of a process, for the leak audits of tests and benchmarks: how many (this process's,
// or one that was started, through /proc/<pid>/fd) and, to say what a leak is, which.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_PROCESS_FDS_H_
#define RPLASMA_BENCH_MPI_LAUNCH_PROCESS_FDS_H_

#include <sys/types.h>

#include <string>

namespace rplasma::bench {

// Open fds of this process (/proc/self/fd), not counting the one used to count them; -1 if
// unreadable.
int CountOpenFds();
// Open fds of process `pid` (/proc/<pid>/fd); -1 if it is gone or unreadable.
int CountOpenFds(pid_t pid);

// "fd -> target" per open fd of process `pid`, one a line (sockets as socket:[inode]).
std::string DescribeOpenFds(pid_t pid);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_PROCESS_FDS_H_
