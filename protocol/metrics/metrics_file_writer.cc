#include "protocol/metrics/metrics_file_writer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma {

absl::Status MetricsFileWriter::WriteAtomically(const std::string& path, const std::string& text) {
  // mkostemp creates the file with O_CREAT | O_EXCL: a name that exists (a planted file or symlink)
  // is never opened, so nothing but our own new file is written.
  std::string temp = absl::StrCat(path, ".XXXXXX");
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (!fd) return ErrnoError("mkostemp", temp, errno);
  absl::Status written = WriteAll(fd.get(), text.data(), text.size());
  if (written.ok() && ::fchmod(fd.get(), 0644) != 0) written = ErrnoError("fchmod", temp, errno);
  if (written.ok() && ::close(fd.release()) != 0) written = ErrnoError("close", temp, errno);
  if (written.ok() && ::rename(temp.c_str(), path.c_str()) != 0) written = ErrnoError("rename", path, errno);
  if (!written.ok()) ::unlink(temp.c_str());
  return written;
}

absl::StatusOr<std::unique_ptr<MetricsFileWriter>> MetricsFileWriter::Start(std::string path, absl::Duration interval,
                                                                            RenderFn render) {
  if (interval <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "metrics file interval must be positive");
  }
  std::unique_ptr<MetricsFileWriter> writer(new MetricsFileWriter(std::move(path), interval, std::move(render)));
  RETURN_IF_ERROR(WriteAtomically(writer->path_, writer->render_()));
  writer->thread_ = std::thread([w = writer.get()] { w->Loop(); });
  return writer;
}

MetricsFileWriter::~MetricsFileWriter() { Shutdown(); }

void MetricsFileWriter::Shutdown() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
  absl::Status last = WriteAtomically(path_, render_());
  if (!last.ok()) LOG(WARNING) << "metrics file: " << last.message();
}

void MetricsFileWriter::Loop() {
  absl::Time last_log = absl::InfinitePast();
  MutexLock lock(&mu_);
  while (!lock.AwaitWithTimeout(absl::Condition(&stopping_), interval_)) {
    lock.Unlock();
    absl::Status status = WriteAtomically(path_, render_());
    if (!status.ok() && absl::Now() - last_log > absl::Minutes(1)) {
      LOG(WARNING) << "metrics file: " << status.message();
      last_log = absl::Now();
    }
    lock.Lock();
  }
}

}  // namespace rplasma
