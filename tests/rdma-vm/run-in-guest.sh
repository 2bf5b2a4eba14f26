#!/bin/bash
# run-in-guest.sh — run one command inside a throw-away QEMU guest that has a real verbs device
# (Soft-RoCE, rdma_rxe), for hosts without an RDMA NIC or without an InfiniBand kernel stack.
#
# usage: tests/rdma-vm/run-in-guest.sh [options] [--] COMMAND [ARG...]
#   -d DIR          directory shared read-write at the same path; the command starts there
#                   (default: the current directory). The host's / is visible read-only.
#   -t SEC          kill the guest after SEC seconds (exit 124). Default 1200.
#   -m MiB          guest memory (default 1536)     -c N   guest vCPUs (default: host nproc)
#   --skip-code N   exit status when the guest cannot be started at all (default 77)
#   --prepare       only install packages, fetch the kernel, build the initramfs
#   -v              show the guest's kernel console
# env: RPLASMA_RDMA_VM_CACHE (default /var/cache/rdma-vm): the extracted Debian kernel + initramfs.
#      RPLASMA_RDMA_VM_ACCEL = auto | kvm | tcg (auto: kvm only if usable for a stock kernel).
#
# How it works: the guest boots Debian's own kernel (extracted from the linux-image package, never
# installed) with a busybox initramfs that mounts the host's / over virtio-9p (read-only, with a
# tmpfs overlay for writes), then re-enters this script as --guest-stage2: it loads rdma_rxe on a
# dummy netdev (10.77.0.1/24), creates rxe0, mounts DIR read-write, runs the command with its
# output streamed to the host, and powers off. Inside: RDMA_VM_IP, RDMA_VM_NETDEV, RDMA_VM_GID_IDX.
# Exit status: the command's; 124 on timeout; the skip code when qemu, the kernel package or
# rdma_rxe are unavailable (the reason is printed).
set -uo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
GUEST_IP=10.77.0.1/24

say() { echo "[run-in-guest] $*" >&2; }

###############################################################################################
# Inside the guest (PID 1 after switch_root).
###############################################################################################
if [ "${1:-}" = --guest-stage2 ]; then
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  X=/run/rplasma-vm
  mountpoint -q /proc || mount -t proc proc /proc
  mountpoint -q /sys || mount -t sysfs sysfs /sys
  mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
  mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
  mount -t tmpfs -o mode=755 tmpfs /run && mkdir -p $X
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none xfer $X
  . $X/settings
  out=$X/out
  finish() { echo "$1" > $X/rc; sync; echo o > /proc/sysrq-trigger; sleep 60; }
  die() { echo "[guest] $*" >> $out; finish 125; }
  mkdir -p "/lib/modules/$KVER" && mount --bind "$KROOT/lib/modules/$KVER" "/lib/modules/$KVER" || die "modules"
  mkdir -p "$SHARE" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none share "$SHARE" || die "mount $SHARE"
  ip link set lo up
  hostname rdma-vm  # Open MPI refuses the kernel's default "(none)"
  modprobe dummy numdummies=0 && ip link add rxenet0 type dummy && ip link set rxenet0 up || die "dummy netdev"
  ip addr add "$GUEST_IP" dev rxenet0 || die "ip addr"
  modprobe rdma_rxe && modprobe rdma_ucm || die "modprobe rdma_rxe/rdma_ucm"
  rdma link add rxe0 type rxe netdev rxenet0 || die "rdma link add rxe0"
  gidx=
  for _ in $(seq 200); do   # the IPv4-mapped RoCE v2 GID appears asynchronously
    for n in 0 1 2 3; do
      g=$(cat /sys/class/infiniband/rxe0/ports/1/gids/$n 2>/dev/null); t=$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$n 2>/dev/null)
      case "$g" in *:ffff:*) [ "$t" = "RoCE v2" ] && gidx=$n ;; esac
      [ -n "$gidx" ] && break
    done
    [ -n "$gidx" ] && break; sleep 0.05
  done
  ulimit -l unlimited
  . $X/env 2>/dev/null
  export RDMA_VM_IP=${GUEST_IP%/*} RDMA_VM_NETDEV=rxenet0 RDMA_VM_GID_IDX=${gidx:-1} HOME=${HOME:-/root}
  cd "$SHARE" || die "cd $SHARE"
  bash $X/cmd < /dev/null >> $out 2>&1
  rc=$?
  cd / && umount "$SHARE"
  finish $rc
fi

###############################################################################################
# Host side.
###############################################################################################
SHARE=$(pwd -P); TIMEOUT=1200; MEM=1536; CPUS=$(nproc); SKIP=77; PREPARE=0; VERBOSE=0
while [ $# -gt 0 ]; do
  case "$1" in
    -d) SHARE=$(readlink -f "$2"); shift 2 ;;
    -t) TIMEOUT=$2; shift 2 ;;
    -m) MEM=$2; shift 2 ;;
    -c) CPUS=$2; shift 2 ;;
    --skip-code) SKIP=$2; shift 2 ;;
    --prepare) PREPARE=1; shift ;;
    -v) VERBOSE=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$SELF" | sed '$d'; exit 0 ;;
    --) shift; break ;;
    -*) say "unknown option $1"; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || [ $PREPARE = 1 ] || { say "no command (see --help)"; exit 2; }
skip() { say "SKIP: $*"; exit "$SKIP"; }

# 1. Host packages: install what is missing (needs root), else give up with the skip code.
PKGS="qemu-system-x86 busybox-static kmod cpio iproute2 rdma-core ibverbs-providers ibverbs-utils perftest"
missing=$(for p in $PKGS; do dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -q '^installed$' || echo "$p"; done | tr '\n' ' ')
if [ -n "${missing// /}" ]; then
  [ "$(id -u)" = 0 ] || skip "missing packages ($missing) and not root to install them"
  say "installing $missing"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >&2 || skip "apt-get install $missing failed"
fi
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 not found"

# 2. The guest kernel: Debian's linux-image package, downloaded and unpacked once (~400 MB).
CACHE=${RPLASMA_RDMA_VM_CACHE:-/var/cache/rdma-vm}
mkdir -p "$CACHE" 2> /dev/null || skip "cannot create $CACHE"
{ exec 8> "$CACHE/.lock"; } 2> /dev/null || skip "cannot write $CACHE"
flock 8
KROOT=$CACHE/kernel
if [ ! -f "$KROOT/.done" ]; then
  say "fetching the Debian kernel package into $KROOT"
  pkg=$(apt-cache depends linux-image-amd64 2> /dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$pkg" ] || { apt-get update -qq >&2; pkg=$(apt-cache depends linux-image-amd64 2> /dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'); }
  [ -n "$pkg" ] || skip "no linux-image package known to apt"
  dl=$(mktemp -d) && chmod 777 "$dl"
  (cd "$dl" && apt-get download "$pkg" >&2) || { rm -rf "$dl"; skip "apt-get download $pkg failed"; }
  rm -rf "$KROOT" && mkdir -p "$KROOT" && dpkg-deb -x "$dl"/*.deb "$KROOT" && rm -rf "$dl" || skip "unpacking $pkg failed"
  depmod -b "$KROOT" "$(ls "$KROOT/lib/modules" | head -1)"
  touch "$KROOT/.done"
fi
KVER=$(ls "$KROOT/lib/modules" | head -1)
[ -n "$KVER" ] && [ -f "$KROOT/boot/vmlinuz-$KVER" ] || skip "kernel in $KROOT is incomplete"
modprobe -d "$KROOT" -S "$KVER" -R rdma_rxe > /dev/null 2>&1 || skip "kernel $KVER has no rdma_rxe module"

# 3. initramfs: busybox, the virtio/9p/overlay modules, and a stage-1 init that mounts the host's /.
INITRD=$CACHE/rplasma-initramfs.cpio.gz
if [ ! -f "$INITRD" ] || [ "$SELF" -nt "$INITRD" ]; then
  say "building $INITRD"
  T=$(mktemp -d); mkdir -p "$T"/{bin,proc,sys,dev,host,rw,root,ko}
  cp /bin/busybox "$T/bin/busybox"
  for m in virtio_pci 9pnet_virtio 9p overlay; do modprobe -d "$KROOT" -S "$KVER" --show-depends "$m"; done |
    awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r ko; do cp "$ko" "$T/ko/"; basename "$ko" >> "$T/ko/load"; done
  cat > "$T/init" << 'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
fatal() { echo "[initramfs] $*" > /dev/ttyS0; echo o > /proc/sysrq-trigger; sleep 60; }
for ko in $(cat /ko/load); do insmod /ko/$ko || fatal "insmod $ko"; done
n=0; until ls /sys/bus/virtio/drivers/9pnet_virtio/ | grep -q virtio; do n=$((n+1)); [ $n -gt 200 ] && fatal "no 9p"; sleep 0.02; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro hostroot /host || fatal "mount host root"
mount -t tmpfs tmpfs /rw && mkdir /rw/up /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/up,workdir=/rw/work overlay /root || fatal "overlay"
for d in proc sys dev; do mount --move /$d /root/$d; done
exec switch_root /root /bin/bash "$stage2" --guest-stage2
INIT
  chmod +x "$T/init"
  (cd "$T" && find . | cpio -o -H newc --quiet | gzip -1 > "$INITRD.new") && mv "$INITRD.new" "$INITRD"
  rm -rf "$T"
fi
flock -u 8
[ $PREPARE = 1 ] && { say "prepared $KVER in $CACHE"; exit 0; }

# 4. Boot. The command and the settings travel through a private exchange directory.
X=$(mktemp -d /tmp/rplasma-vm.XXXXXX)
cleanup() { [ -n "${QPID:-}" ] && kill "$QPID" 2> /dev/null; rm -rf "$X"; }
trap cleanup EXIT
printf '%q ' "$@" > "$X/cmd"; echo >> "$X/cmd"
export -p | grep -E '^declare -x (PATH|LANG|LC_[A-Z]+|HOME|USER|TMPDIR|RPLASMA_[A-Z0-9_]+|GTEST_[A-Z_]+|CTEST_[A-Z_]+|ASAN_OPTIONS|UBSAN_OPTIONS|TSAN_OPTIONS)=' > "$X/env"
cat > "$X/settings" << EOF2
KVER='$KVER'
KROOT='$KROOT'
SHARE='$SHARE'
GUEST_IP='$GUEST_IP'
EOF2
: > "$X/out"
accel=${RPLASMA_RDMA_VM_ACCEL:-auto}
if [ "$accel" = auto ]; then
  accel=tcg   # a PVM-flavoured /dev/kvm cannot boot a stock kernel
  [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && accel=kvm
fi
if [ "$accel" = kvm ]; then ACCEL=(-accel kvm -cpu host); else ACCEL=(-accel tcg,thread=multi,tb-size=256 -cpu max); fi
APPEND="console=ttyS0 panic=-1 oops=panic mitigations=off stage2=$SELF"
[ "$VERBOSE" = 1 ] && APPEND="$APPEND loglevel=6" || APPEND="$APPEND quiet loglevel=1"
[ "$accel" = tcg ] && APPEND="$APPEND tsc=unstable"
say "booting $KVER ($accel, $CPUS vCPU, $MEM MiB), sharing $SHARE"
start=$(date +%s)
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 -name rplasma-rdma-vm -M pc -nodefaults -no-user-config \
  -display none -monitor none -no-reboot "${ACCEL[@]}" -smp "$CPUS" -m "$MEM" \
  -kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$INITRD" -append "$APPEND" \
  -chardev file,id=con,path="$X/console" -serial chardev:con \
  -fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap -device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
  -fsdev local,id=x,path="$X",security_model=none -device virtio-9p-pci,fsdev=x,mount_tag=xfer \
  -fsdev local,id=s,path="$SHARE",security_model=none,multidevs=remap -device virtio-9p-pci,fsdev=s,mount_tag=share \
  -device virtio-rng-pci < /dev/null > "$X/qemu.log" 2>&1 &
QPID=$!
tail -n +1 -f --pid=$QPID "$X/out" &
TPID=$!
wait $QPID; qrc=$?; QPID=
wait $TPID 2> /dev/null
[ "$VERBOSE" = 1 ] && cat "$X/console" >&2
if [ -f "$X/rc" ]; then
  rc=$(cat "$X/rc")
  say "command exited with $rc after $(( $(date +%s) - start )) s (boot included)"
  exit "$rc"
fi
if [ $qrc = 124 ] || [ $qrc = 137 ]; then say "timeout after ${TIMEOUT}s: guest killed"; exit 124; fi
say "guest ended without a command status (qemu exit $qrc)"; tail -20 "$X/qemu.log" "$X/console" >&2
exit 125
