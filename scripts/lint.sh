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

# The layer rule (docs/ARCHITECTURE.md): a folder includes only from the folders scripts/layers.txt
# lets it, which are all above it there. Also checks the file itself, and that every source file
# is in one of its folders.
found=$(sources | perl -e '
  my (@order, %deps, %may, @bad);
  open(my $layers, "<", "scripts/layers.txt") or die "lint: scripts/layers.txt: $!\n";
  while (<$layers>) {
    s/#.*//;
    next unless /\S/;
    my ($folder, $rest) = /^\s*([^:\s]+)\s*:(.*)$/
      or do { push @bad, "scripts/layers.txt:$.: expected \"folder: folders it may include from\""; next };
    push @bad, "scripts/layers.txt:$.: $folder is listed twice" if $deps{$folder};
    my %m = ($folder => 1);
    for my $d (split " ", $rest) {
      if ($d eq "*") { $m{"*"} = 1; }
      elsif ($may{$d}) { %m = (%m, %{$may{$d}}); }
      else { push @bad, "scripts/layers.txt:$.: $folder: $d is not a folder on a line above"; }
    }
    $deps{$folder} = 1;
    $may{$folder} = \%m;
    push @order, $folder;
  }
  close $layers;
  sub owner {
    my ($path) = @_;
    my $best;
    for my $f (@order) { $best = $f if index($path, "$f/") == 0 && (!defined $best || length $f > length $best); }
    return $best;
  }
  while (my $file = <STDIN>) {
    chomp $file;
    my $from = owner($file);
    if (!defined $from) { push @bad, "$file: in no folder of scripts/layers.txt"; next; }
    open(my $in, "<", $file) or die "lint: $file: $!\n";
    while (<$in>) {
      next unless /^\s*#\s*include\s*"([^"]+)"/;
      my $to = owner($1);
      next if !defined $to || $may{$from}{$to} || $may{$from}{"*"};
      push @bad, "$file:$.: includes \"$1\" from $to/, which $from/ may not (scripts/layers.txt)";
    }
    close $in;
  }
  print "$_\n" for @bad;
')
[ -z "$found" ] || fail "an include breaks the layer rule (docs/ARCHITECTURE.md, scripts/layers.txt)" "$found"

# Formatting: every file as clang-format writes it (.clang-format: Google's style, 120 columns,
# includes in their groups). lint runs before setup.sh, so it installs Debian's clang-format itself.
if ! command -v clang-format >/dev/null; then
  echo "lint: installing clang-format"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-format >/dev/null
fi
found=$(sources | xargs clang-format --dry-run 2>&1 | grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|error)' |
  cut -d: -f1,2 | sort -u || true)
[ -z "$found" ] || fail "not as clang-format writes it (fix: git ls-files '*.h' '*.cc' '*.cc.in' | xargs clang-format -i)" "$found"

exit $status
