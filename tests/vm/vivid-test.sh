#!/usr/bin/env bash
# Runs jetagent against the kernel's vivid V4L2 test driver: boots Debian's kernel under qemu (TCG)
# with an initramfs holding jetagent and its libraries, captures, and checks the logs on the host.
#
#   vivid-test.sh [--checker PATH] JETAGENT_BINARY [WORKDIR]
#
# WORKDIR (default: vm-cache next to the binary) caches the kernel, keyed by its package version,
# and the initramfs parts, so reruns skip the download. Missing Debian packages are installed when
# run as root. Exit status: 0 passed, 1 failed, 77 skipped (tools missing and not installable);
# with JETAGENT_REQUIRE_VM=1 (CI) a skip is a failure. Scenarios and their checks: vm-init.sh.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin" # depmod and modprobe, for users whose PATH lacks them

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
original_args=("$@") # for the one retry below
checker=""
if [ "${1:-}" = "--checker" ]; then
    checker=${2:?--checker needs a path}
    shift 2
fi
binary=${1:?usage: vivid-test.sh [--checker PATH] JETAGENT_BINARY [WORKDIR]}
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
workdir=${2:-$(dirname "$binary")/vm-cache}
[ -n "$checker" ] || checker=$(dirname "$binary")/../tests/jetagent_vivid_check

# What the scenarios need; vm-init.sh reads the same values from /vivid-test.env.
readonly kFps=15 kWidth=320 kHeight=180 kFrames=210 kMinFrames=200 kTolerance=0.05
readonly kFormats="YUYV NV12"
readonly kRecoveryFrames=200 kMinFramesBeforeUnload=25 kMinFramesAfterReload=50
readonly kVivid="n_devs=1 node_types=0x1 num_inputs=1 input_types=0"
# Two devices as two streams of one task (vivid-two.yaml), each in its own pixel format: vivid's
# module parameters are per device. Fewer frames than a capture scenario: the guest draws and
# converts two frames a period.
readonly kVividTwo="n_devs=2 node_types=0x1,0x1 num_inputs=1,1 input_types=0,0"
readonly kTwoStreams="cam0:YUYV,cam1:NV12" kTwoFrames=150 kMinTwoFrames=140
# The guest times a jetagent run of kCalibrationFrames synthetic frames and derives each
# scenario's time limit from it (vm-init.sh). vivid skips a frame when its thread wakes more than
# half a period late; a thread in the guest that sleeps as vivid's does counts such wakes during
# each scenario, and a failed scenario that had them, or whose guest CPUs were kBusyPercent busy,
# ran on a guest too slow for vivid: the environment, not a capture defect.
readonly kCalibrationFrames=30 kBusyPercent=90
# qemu is stopped after kQemuTimeoutS; the scenarios' limits must fit in what is left of it after
# the boot and the calibration.
readonly kQemuTimeoutS=600 kMemoryMiB=2048

start_s=$EPOCHREALTIME
phase_s=$start_s
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
timing() { echo "[vivid-test] timing: $1 $(elapsed "$phase_s") s"; phase_s=$EPOCHREALTIME; }
say() { echo "[vivid-test] $*"; }
fail() { echo "[vivid-test] FAILED: $*" >&2; exit 1; }
skip() {
    if [ "${JETAGENT_REQUIRE_VM:-0}" = 1 ]; then
        fail "$* (JETAGENT_REQUIRE_VM=1: the VM test may not be skipped)"
    fi
    echo "[vivid-test] skipped: $*"
    exit 77
}

[ -x "$binary" ] || fail "no jetagent binary at $binary"
[ -x "$checker" ] || fail "no log checker at $checker (build the jetagent_vivid_check target)"

# --- Tools -------------------------------------------------------------------------------------
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q "$@"; }

missing=()
for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio depmod:kmod \
    modprobe:kmod; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
command -v apt-get >/dev/null || skip "apt-get is missing: this test needs Debian's packages"
if [ ${#missing[@]} -gt 0 ]; then
    read -r -a missing <<<"$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
    [ "$(id -u)" = 0 ] || skip "missing packages ${missing[*]}; run as root to install them"
    say "installing ${missing[*]}"
    if ! apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
        apt_get update >/dev/null || true
        apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
            skip "cannot install ${missing[*]}"
    fi
fi
timing "tools"

# --- Kernel: linux-image-amd64's versioned package, unpacked once per version ---------------------
mkdir -p "$workdir"
workdir=$(cd "$workdir" && pwd)
resolve_kernel() {
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
    [ -n "$kpkg" ] || return 1
    kver=$(apt-cache show --no-all-versions "$kpkg" 2>/dev/null |
        awk '/^Version:/ { print $2; exit }')
    [ -n "$kver" ]
}
if ! resolve_kernel; then
    if [ "$(id -u)" = 0 ]; then
        apt_get update >/dev/null || true
    fi
    resolve_kernel || kpkg=""
fi
if [ -n "$kpkg" ]; then
    kernel_dir=$workdir/kernel/${kpkg}_$kver
else
    # No package lists (offline, not root): a kernel cached by an earlier run will do.
    kernel_dir=""
    for complete in "$workdir"/kernel/*/.complete; do
        [ -f "$complete" ] && kernel_dir=${complete%/.complete}
    done
    [ -n "$kernel_dir" ] ||
        skip "cannot resolve linux-image-amd64 (no package lists: apt-get update as root)"
fi
if [ ! -f "$kernel_dir/.complete" ]; then
    say "fetching $kpkg $kver"
    rm -rf "$kernel_dir" "$workdir/kernel/unpack"
    mkdir -p "$workdir/kernel/unpack"
    (cd "$workdir/kernel/unpack" && apt-get download "$kpkg=$kver" >/dev/null 2>&1) ||
        skip "cannot download $kpkg $kver with apt-get download"
    dpkg-deb -x "$workdir"/kernel/unpack/*.deb "$workdir/kernel/unpack/root"
    uname_r=$(ls "$workdir/kernel/unpack/root/lib/modules")
    full=$workdir/kernel/unpack/root
    depmod -b "$full" "$uname_r"
    # Keep the kernel and only vivid's module closure: the whole tree is about 400 MB.
    mkdir -p "$kernel_dir/root/lib/modules/$uname_r"
    cp "$full/boot/vmlinuz-$uname_r" "$kernel_dir/vmlinuz"
    modprobe -d "$full" -S "$uname_r" --show-depends vivid | awk '$1 == "insmod" { print $2 }' |
        while read -r module; do
            rel=${module#"$full"/}
            mkdir -p "$kernel_dir/root/$(dirname "$rel")"
            cp "$module" "$kernel_dir/root/$rel"
        done
    cp "$full/lib/modules/$uname_r"/modules.{order,builtin,builtin.modinfo} \
        "$kernel_dir/root/lib/modules/$uname_r/"
    depmod -b "$kernel_dir/root" "$uname_r"
    echo "$uname_r" >"$kernel_dir/uname-r"
    rm -rf "$workdir/kernel/unpack"
    touch "$kernel_dir/.complete"
    timing "kernel download and unpack"
else
    say "kernel cached: $(basename "$kernel_dir")"
fi
uname_r=$(cat "$kernel_dir/uname-r")

# --- Initramfs: base (busybox, modules), libraries, and this run's binary and files -------------
# The kernel unpacks concatenated cpio archives in order, so the parts are cached separately.
# Uncompressed: decompressing 300+ MB under TCG costs more boot time than it saves.
cpio_of() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0); }

# Files a program needs: its ELF interpreter and every library ldd resolves.
closure() {
    { ldd "$1" 2>/dev/null || true; } |
        awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}

run_dir=$workdir/run
rm -rf "$run_dir"
mkdir -p "$run_dir/app/bin" "$run_dir/app/jetagent/tests/vm"
if command -v strip >/dev/null; then
    strip --strip-debug -o "$run_dir/app/bin/jetagent" "$binary"
else
    cp "$binary" "$run_dir/app/bin/jetagent"
fi

# The CPU engine is a plugin (plugins/xnnpack): it goes where jetagent looks, bin/../lib/jetagent/
# plugins, as a package installs it.
plugin=$(dirname "$binary")/../lib/jetagent/plugins/jetagent-xnnpack.so
[ -f "$plugin" ] || fail "no CPU engine plugin at $plugin (build the jetagent target, which builds its plugins)"
mkdir -p "$run_dir/app/lib/jetagent/plugins"
if command -v strip >/dev/null; then
    strip --strip-debug -o "$run_dir/app/lib/jetagent/plugins/jetagent-xnnpack.so" "$plugin"
else
    cp "$plugin" "$run_dir/app/lib/jetagent/plugins/jetagent-xnnpack.so"
fi

# The checker goes in too: its `stalls` mode watches the guest's timers during each scenario.
cp "$checker" "$run_dir/app/bin/jetagent_vivid_check"
busybox=$(command -v busybox)
lib_list=$( (closure "$run_dir/app/bin/jetagent"; closure "$plugin"; closure "$checker"
    closure "$busybox") | LC_ALL=C sort -u)
lib_key=$(printf '%s\n' "$lib_list" | xargs -r stat -L -c '%n %s %Y' | sha256sum | cut -c1-16)
libs_cpio=$workdir/libs-$lib_key.cpio
if [ ! -f "$libs_cpio" ]; then
    rm -f "$workdir"/libs-*.cpio
    tree=$workdir/libs-tree
    rm -rf "$tree"
    while read -r lib; do
        mkdir -p "$tree$(dirname "$lib")"
        cp -L "$lib" "$tree$lib"
    done <<<"$lib_list"
    cpio_of "$tree" >"$libs_cpio.tmp" && mv "$libs_cpio.tmp" "$libs_cpio"
    rm -rf "$tree"
fi
lib_dirs=$(printf '%s\n' "$lib_list" | xargs -r -n1 dirname | LC_ALL=C sort -u | paste -sd: -)

base_key=$( (echo "$kernel_dir"; stat -L -c '%n %s %Y' "$busybox") | sha256sum | cut -c1-16)
base_cpio=$workdir/base-$base_key.cpio
if [ ! -f "$base_cpio" ]; then
    rm -f "$workdir"/base-*.cpio
    tree=$workdir/base-tree
    rm -rf "$tree"
    cp -a "$kernel_dir/root" "$tree"
    mkdir -p "$tree"/{bin,sbin,proc,sys,dev,tmp,root,etc}
    cp "$busybox" "$tree/bin/busybox"
    for applet in $("$busybox" --list); do
        [ "$applet" = busybox ] || ln -sf busybox "$tree/bin/$applet"
    done
    cpio_of "$tree" >"$base_cpio.tmp" && mv "$base_cpio.tmp" "$base_cpio"
    rm -rf "$tree"
fi

app=$run_dir/app
cp "$here/vm-init.sh" "$app/init"
chmod 755 "$app/init"
cp "$here/vivid.yaml" "$here/vivid-two.yaml" "$app/jetagent/tests/vm/"
"$checker" model "$app/jetagent/tests/vm/plane_means.onnx" "$app/jetagent/tests/vm/plane_means.txt" ||
    fail "cannot write the task's model"
cat >"$app/vivid-test.env" <<EOF
LD_LIBRARY_PATH=$lib_dirs
VIVID_ARGS="$kVivid"
VIVID_TWO_ARGS="$kVividTwo"
TWO_FRAMES=$kTwoFrames
FORMATS="$kFormats"
FPS=$kFps
FRAMES=$kFrames
RECOVERY_FRAMES=$kRecoveryFrames
CAL_FRAMES=$kCalibrationFrames
QEMU_TIMEOUT_S=$kQemuTimeoutS
LATE_MS=$((1000 / kFps / 2))
EOF
cpio_of "$app" >"$run_dir/app.cpio"
cat "$base_cpio" "$libs_cpio" "$run_dir/app.cpio" >"$run_dir/initrd.cpio"
mib() { du -m "$1" | cut -f1; }
say "initramfs: $(mib "$run_dir/initrd.cpio") MiB (base $(mib "$base_cpio")," \
    "libraries $(mib "$libs_cpio") in $(wc -l <<<"$lib_list") files," \
    "jetagent and its files $(mib "$run_dir/app.cpio"))"
timing "initramfs build"

# --- Boot ----------------------------------------------------------------------------------------
# ttyS0 is the console (echoed here); ttyS1 carries a tar of the run logs out of the VM.
say "booting $uname_r under qemu-system-x86_64 -accel tcg"
boot_s=$EPOCHREALTIME
set +e
# -cpu max: TCG emulates AVX2 and FMA, which makes OpenCV's CNN about 1.6x faster than on qemu64.
timeout --kill-after=10 "$kQemuTimeoutS" qemu-system-x86_64 -accel tcg -cpu max -smp 2 \
    -m "$kMemoryMiB" \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$kernel_dir/vmlinuz" -initrd "$run_dir/initrd.cpio" \
    -append "console=ttyS0 panic=-1 loglevel=4" \
    -serial stdio -serial "file:$run_dir/data.tar" </dev/null 2>&1 |
    while IFS= read -r line; do
        line=${line//$'\r'/}
        case $line in
        "@@vivid-test init"*) echo "[vivid-test] timing: boot to /init $(elapsed "$boot_s") s" ;;
        "@@vivid-test "*) line="$line [host +$(elapsed "$boot_s") s]" ;;
        esac
        printf '%s\n' "$line"
    done | tee "$run_dir/console.log"
qemu_status=${PIPESTATUS[0]}
set -e
rm -f "$run_dir/initrd.cpio" # 350 MB, and cat makes it again from the cached parts in a second
phase_s=$boot_s
timing "VM total"
[ "$qemu_status" = 124 ] && fail "the VM did not power off within $kQemuTimeoutS s"
[ "$qemu_status" = 0 ] || fail "qemu exited with status $qemu_status"

# --- Checks --------------------------------------------------------------------------------------
expected=$(sed -n 's/^@@vivid-test data bytes=\([0-9]*\) sha256=\([0-9a-f]*\).*/\1 \2/p' \
    "$run_dir/console.log" | tail -n 1)
[ -n "$expected" ] || fail "the VM did not hand out its logs (see the console above)"
got="$(stat -c %s "$run_dir/data.tar") $(sha256sum <"$run_dir/data.tar" | cut -d' ' -f1)"
[ "$got" = "$expected" ] || fail "the logs arrived damaged: expected $expected, got $got"
mkdir -p "$run_dir/out"
tar -xf "$run_dir/data.tar" -C "$run_dir/out"
out=$run_dir/out

# The guest's speed, and what a failure means given it.
speed=$(cat "$out/speed.txt" 2>/dev/null || true)
calibration_s=$(sed -n 's/^calibration_s=\([0-9.]*\) .*/\1/p' <<<"$speed")
if [ -z "$calibration_s" ] || [ "$(cat "$out/calibration.rc" 2>/dev/null)" != 0 ]; then
    echo "[vivid-test] the guest's speed calibration failed; its output:"
    sed 's/^/    /' "$out/calibration.log" 2>/dev/null | tail -n 20
    fail "no speed calibration (see above)"
fi
say "guest speed: $speed"
if grep -q '^@@vivid-test too slow' "$run_dir/console.log"; then
    fail "the guest is too slow: $kCalibrationFrames calibration frames took $calibration_s s," \
        "so the scenarios' time limits would not fit in qemu's $kQemuTimeoutS s ($speed)." \
        "The environment, not a capture defect: run it on a faster host"
fi
verdict() { # SCENARIO: whose fault a failure is: how late the guest's timers were, how busy it was
    local took limit busy stalls late
    read -r took limit busy <"$out/$1.time" 2>/dev/null || true
    stalls=$(cat "$out/$1.stalls" 2>/dev/null || true)
    late=$(sed -n 's/.*late_wakes=\([0-9]*\).*/\1/p' <<<"$stalls")
    if [ -z "$busy" ] || [ -z "$late" ]; then
        echo "a defect (no scenario load to blame)"
    elif [ "$late" -gt 0 ] || [ "$busy" -ge "$kBusyPercent" ]; then
        echo "the guest was too slow for vivid to produce $kFps fps (its timers woke more than" \
            "$((1000 / kFps / 2)) ms late $late times, $stalls; CPUs $busy% busy; calibration" \
            "$calibration_s s): the environment, not a capture defect"
    else
        echo "the guest kept time (timers never more than $((1000 / kFps / 2)) ms late, $stalls;" \
            "CPUs $busy% busy): a capture defect"
    fi
}

failures=0
environment_failures=0 # failures that verdict() puts down to a guest too slow for vivid
count_failure() { # VERDICT
    failures=$((failures + 1))
    case "$1" in *"the environment, not a capture defect"*) environment_failures=$((environment_failures + 1)) ;; esac
}
check() {
    if "$checker" "$@"; then :; else
        local why
        why=$(verdict "$(basename "$2")")
        count_failure "$why"
        echo "[vivid-test] $1 check of $(basename "$2") failed: $why"
    fi
}
scenario_ok() {
    local rc took limit busy
    rc=$(cat "$out/$1.rc" 2>/dev/null || echo missing)
    read -r took limit busy <"$out/$1.time" 2>/dev/null || true
    say "scenario $1: ${took:-?} s (limit ${limit:-?} s, from the guest's speed), guest CPUs" \
        "${busy:-?}% busy"
    if [ "$rc" != 0 ]; then
        local why
        why=$(verdict "$1")
        if awk -v a="${took:-0}" -v b="${limit:-0}" 'BEGIN { exit !(a >= b) }'; then
            echo "[vivid-test] scenario $1: jetagent did not finish within its $limit s:" \
                "$why; its output:"
        else
            echo "[vivid-test] scenario $1: jetagent exited with status $rc: $why;" \
                "its output:"
        fi
        sed 's/^/    /' "$out/$1.log" 2>/dev/null | tail -n 40
        count_failure "$why"
        return 1
    fi
}
if [ "$(cat "$out/probe.rc" 2>/dev/null)" = 0 ]; then
    sed -n '1,12p' "$out/probe.txt" | sed 's/^/    /'
    check probe "$out/probe.json" "$(echo $kFormats | tr ' ' ',')" $kWidth $kHeight $kFps
else
    echo "[vivid-test] jetagent probe cameras failed:"
    sed 's/^/    /' "$out/probe.err" 2>/dev/null | tail -n 20
    failures=$((failures + 1))
fi
for format in $kFormats; do
    if scenario_ok "capture-$format"; then
        check capture "$out/capture-$format" --format "$format" --width $kWidth --height $kHeight \
            --fps $kFps --tolerance $kTolerance --min-frames $kMinFrames
    fi
done
if scenario_ok recovery; then
    reloaded_ns=$(sed -n 's/^reloaded_ns=//p' "$out/recovery.events")
    sed 's/^/    /' "$out/recovery.events"
    check recovery "$out/recovery" --format YUYV --width $kWidth --height $kHeight --fps $kFps \
        --tolerance $kTolerance --min-frames $kMinFramesBeforeUnload \
        --reloaded-ns "${reloaded_ns:-0}" --min-frames-after $kMinFramesAfterReload
fi
if scenario_ok two-devices; then
    check streams "$out/two-devices" --streams "$kTwoStreams" --width $kWidth --height $kHeight \
        --fps $kFps --tolerance $kTolerance --min-frames $kMinTwoFrames \
        --run-log "$out/two-devices.log"
fi
phase_s=$start_s
timing "total"
# A host busy with other work (a parallel build, say) can make vivid itself skip a frame: when
# every failure is put down to that, the whole VM runs once more (the kernel and initramfs are
# cached, so about 90 s); a second failure of any kind fails the test.
if [ "$failures" != 0 ] && [ "$failures" = "$environment_failures" ] &&
    [ -z "${JETAGENT_VM_RETRY:-}" ]; then
    say "all $failures failure(s) came from a guest too slow for vivid (the environment):" \
        "running the VM once more; logs of this try in $workdir/first-try"
    rm -rf "$workdir/first-try"
    mv "$out" "$workdir/first-try"
    exec env JETAGENT_VM_RETRY=1 bash "${BASH_SOURCE[0]}" "${original_args[@]}"
fi
retried=""
[ -n "${JETAGENT_VM_RETRY:-}" ] && retried=" (on the second try; the first try's logs are in $workdir/first-try)"
[ "$failures" = 0 ] || fail "$failures scenario(s) failed; logs in $out$retried"
say "passed"
