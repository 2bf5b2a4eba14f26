// StoreSubscription: the Subscription behind Client::Subscribe — its own connection to the store
// that sent ConnectRequest then SubscribeRequest and from then on only receives events
// (StoreReply frames with request_id 0, each an ObjectEvent or several in an ObjectEvents; Next
// hands them out one at a time). The arena fd that comes with the ConnectReply is closed
// at once: events describe objects, they do not map them.
//
// The socket is non-blocking after the handshake; frames are assembled by a FrameReader, so a
// timeout in the middle of a frame never desynchronizes the stream.
//
// Thread-safety: none (one reader), as Subscription says.
#ifndef RPLASMA_CLIENT_STORE_SUBSCRIPTION_H_
#define RPLASMA_CLIENT_STORE_SUBSCRIPTION_H_

#include <deque>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "client/client.h"
#include "client/fork_guard.h"
#include "protocol/base/unique_fd.h"
#include "protocol/frame.h"

namespace rplasma {

class StoreSubscription final : public Subscription {
 public:
  // Connects, handshakes and subscribes, each step within `handshake_timeout` (kDeadlineExceeded
  // after it: a store that stopped accepting or answering never holds the caller).
  static absl::StatusOr<std::unique_ptr<StoreSubscription>> Create(
      const std::string& socket_path, absl::string_view client_name, bool include_existing,
      absl::Duration handshake_timeout = absl::Seconds(10));

  absl::StatusOr<ObjectEvent> Next(absl::Duration timeout) override;
  int fd() const override { return fd_.get(); }

 private:
  explicit StoreSubscription(UniqueFd fd) : fd_(std::move(fd)) {}

  UniqueFd fd_;
  const ForkGuard fork_guard_;  // a forked child must not take the parent's events
  FrameReader reader_;
  std::deque<ObjectEvent> ready_;  // decoded from an ObjectEvents frame, not yet returned
  absl::Status read_error_;        // the socket hit EOF/an error; returned once the buffer is drained
  absl::Status broken_;            // once set, every Next returns it
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_STORE_SUBSCRIPTION_H_
