// MetricsFileWriter: writes a text exposition (protocol/metrics/prometheus_text.h) to a file every
// `interval`, for node_exporter's textfile collector (--collector.textfile.directory; the file
// name must end in .prom).
//
// Each write goes to "<path>.tmp" in the same directory and is renamed over `path`, so a reader
// sees the previous document or the new one, never half of one. The first write happens in Start
// (so a bad path is an error there); later failures are logged (at most once a minute) and retried
// at the next interval. Shutdown writes once more, so the file ends with the final values.
//
// Thread-safety: Start/Shutdown/destructor from one thread. `render` runs on the writer's thread
// (and in Start and Shutdown): it must be thread-safe.
#ifndef RPLASMA_PROTOCOL_METRICS_METRICS_FILE_WRITER_H_
#define RPLASMA_PROTOCOL_METRICS_METRICS_FILE_WRITER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rplasma {

class MetricsFileWriter {
 public:
  using RenderFn = std::function<std::string()>;

  static absl::StatusOr<std::unique_ptr<MetricsFileWriter>> Start(std::string path, absl::Duration interval,
                                                                  RenderFn render);
  ~MetricsFileWriter();  // Shutdown()
  MetricsFileWriter(const MetricsFileWriter&) = delete;
  MetricsFileWriter& operator=(const MetricsFileWriter&) = delete;

  void Shutdown();

  // Writes `text` to `path` through a new temporary file beside it ("<path>.XXXXXX", created with
  // O_EXCL, so never an existing file or a symlink's target) renamed over `path` (which replaces a
  // symlink there, never the file it points to). Readers see the old text or the new, whole. Safe
  // as root in a directory others can write: no existing file is opened, truncated or followed.
  static absl::Status WriteAtomically(const std::string& path, const std::string& text);

 private:
  MetricsFileWriter(std::string path, absl::Duration interval, RenderFn render)
      : path_(std::move(path)), interval_(interval), render_(std::move(render)) {}
  void Loop();

  const std::string path_;
  const absl::Duration interval_;
  const RenderFn render_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_METRICS_FILE_WRITER_H_
