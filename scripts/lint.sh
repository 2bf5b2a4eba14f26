#!/usr/bin/env bash
# Cheap checks of the source tree that no compiler makes; scripts/test.sh runs them first.
# Exits non-zero on any finding, naming file and line.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "lint: $1"; echo "$2" | sed 's/^/  /'; status=1; }

sources() { git ls-files -- '*.h' '*.cc' '*.cc.in'; }

# Debian's abseil is not built with -fsanitize=thread: TSan cannot see the order its mutexes,
# notifications and counters give, and reports false races (issue 26) or, worse, learns nothing.
# rplasma::MutexLock (protocol/base/mutex_lock.h) and rplasma::Notification (notification.h)
# annotate what they do; std::mutex is intercepted by TSan and fine.
found=$(sources | grep -v -e '^protocol/base/mutex_lock.h$' -e '^protocol/base/notification.h$' |
  xargs perl -ne 's{//.*}{}; print "$ARGV:$.: $_" if
    m{absl::(MutexLock|ReaderMutexLock|WriterMutexLock|MutexLockMaybe|ReleasableMutexLock|Notification|BlockingCounter|Barrier)\b}
    || m{absl/synchronization/(notification|blocking_counter|barrier)\.h}
    || m{\b\w*(mu|mutex)_?(\.|->)(Lock|Unlock|ReaderLock|ReaderUnlock|WriterLock|WriterUnlock|LockWhen\w*|Await\w*)\(};
    close ARGV if eof' || true)
[ -z "$found" ] || fail "abseil synchronization TSan cannot follow; use rplasma::MutexLock / rplasma::Notification" "$found"

exit $status
