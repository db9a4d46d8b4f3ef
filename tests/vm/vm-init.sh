#!/bin/sh
# /init of the vivid test VM (busybox sh): loads vivid, runs jetagent's capture scenarios, hands
# the logs out on ttyS1 as a tar and powers off. vivid-test.sh builds the VM and checks the logs.
#
# Scenarios, each a real `jetagent run --as-fast-as-possible` (every captured frame reaches the
# task and the log), 320x180 at the config's rate, on v4l2:///dev/video0 except the last:
#   capture-FORMAT  FRAMES frames in each of FORMATS (from /vivid-test.env)
#   recovery        RECOVERY_FRAMES frames in YUYV; two seconds after the pipeline starts
#                   the driver is unloaded and, two seconds later, loaded again: rmmod, or, while
#                   jetagent holds the device open (rmmod then fails: in use), unbind the platform
#                   device first, which fails the open file with ENODEV so jetagent closes it, then
#                   rmmod. recovery.events has the times (CLOCK_MONOTONIC ns).
#   two-devices     vivid loaded again with two devices (VIVID_TWO_ARGS): /dev/video0 and
#                   /dev/video1 as two streams of one task (vivid-two.yaml: YUYV and NV12),
#                   TWO_FRAMES frames each
# Before them, the guest's speed: a `jetagent run` of CAL_FRAMES synthetic 320x180 frames with the
# same task (process start, libraries, OpenCV and the per-frame work), timed. Each scenario's time
# limit is its capture time at the nominal rate plus an allowance that scales with that time; when
# the limits would not fit in what is left of QEMU_TIMEOUT_S, the guest is too slow for the test
# and says so.
# Lines starting "@@vivid-test" are markers the host reads.
export PATH=/bin:/sbin
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mark() { echo "@@vivid-test $*"; }
mark "init uptime_s=$(cut -d' ' -f1 /proc/uptime)"

# shellcheck source=/dev/null
. /vivid-test.env
export LD_LIBRARY_PATH

# CLOCK_MONOTONIC in nanoseconds (the clock of the frames' capture_ns), from the kernel's ktime.
now_ns() { sed -n 's/^now at \([0-9]*\) nsecs$/\1/p' /proc/timer_list | head -n 1; }
seconds_since() { echo "$1 $(now_ns)" | awk '{ printf "%.1f", ($2 - $1) / 1e9 }'; }

finish() {
    dmesg >/out/dmesg.txt
    tar -cf /tmp/out.tar -C /out .
    stty -F /dev/ttyS1 raw -echo 2>/dev/null
    cat /tmp/out.tar >/dev/ttyS1
    mark "data bytes=$(wc -c </tmp/out.tar) sha256=$(sha256sum </tmp/out.tar | cut -d' ' -f1)"
    poweroff -f
}
mkdir -p /out

t=$(now_ns)
# shellcheck disable=SC2086 # VIVID_ARGS holds several module parameters
if ! modprobe vivid $VIVID_ARGS; then
    mark "modprobe vivid failed"
    finish
fi
mark "vivid loaded in $(seconds_since "$t") s: $(cat /sys/class/video4linux/video0/name)"

# What jetagent's probe says of the real driver, as text (for the log) and JSON (checked).
/bin/jetagent probe cameras >/out/probe.txt 2>&1
/bin/jetagent probe cameras --json >/out/probe.json 2>/out/probe.err
echo $? >/out/probe.rc

config=/jetagent/tests/vm/vivid.yaml

# Guest speed, and the time limits it gives.
t=$(now_ns)
/bin/jetagent run --config "$config" --source synthetic://shapes --as-fast-as-possible \
    --frames "$CAL_FRAMES" --log-dir /out/calibration >/out/calibration.log 2>&1
echo $? >/out/calibration.rc
calibration_s=$(seconds_since "$t")
# awk: busybox sh has integers only. Allowance per jetagent run: three times the calibration (a
# scenario's start and stop took up to twice as long), plus 10 s for the emulator's scheduling; the
# recovery run adds its 4 s outage and the reconnect. What is left of qemu's time limit, less 30 s
# for handing the logs out, must hold them all.
limits=$(awk -v c="$calibration_s" -v f="$FRAMES" -v rf="$RECOVERY_FRAMES" -v tf="$TWO_FRAMES" \
    -v fps="$FPS" -v limit="$((QEMU_TIMEOUT_S - $(cut -d. -f1 /proc/uptime) - 30))" 'BEGIN {
    allowance = 3 * c + 10
    run = int(f / fps + allowance + 0.5)
    recovery = int(rf / fps + 6 + allowance + 0.5)
    two = int(tf / fps + allowance + 0.5)
    total = 2 * run + recovery + two
    printf "%d %d %d %d %d %d\n", run, recovery, two, total, limit, total <= limit
}')
read -r run_timeout_s recovery_timeout_s two_timeout_s total_s left_s fits <<LIMITS
$limits
LIMITS
speed="calibration_s=$calibration_s rc=$(cat /out/calibration.rc) run_timeout_s=$run_timeout_s"
speed="$speed recovery_timeout_s=$recovery_timeout_s two_timeout_s=$two_timeout_s"
speed="$speed total_s=$total_s left_s=$left_s fits=$fits"
echo "$speed" >/out/speed.txt
mark "speed $speed"
if [ "$(cat /out/calibration.rc)" != 0 ]; then
    mark "calibration run failed"
    finish
fi
if [ "$fits" != 1 ]; then
    mark "too slow: the scenarios would need $total_s s, more than the $left_s s left"
    finish
fi

# Whether the guest kept time during a scenario: vivid skips a sequence number when its frame thread
# wakes more than half a period late, which an emulated guest on a slow or busy host does (frames
# lost to the host, not to jetagent). `jetagent_vivid_check stalls` sleeps as that thread does and
# counts such wakes (NAME.stalls); cpu_ticks gives how busy the guest's CPUs were (NAME.time).
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
busy_percent() { # BUSY_BEFORE IDLE_BEFORE
    cpu_ticks | awk -v b="$1" -v i="$2" '{ t = $1 - b + $2 - i; printf "%d", t ? 100 * ($1 - b) / t : 0 }'
}

run() { # NAME CONFIG TIMEOUT_S ARGS...: one jetagent run, output in /out/NAME.log, status NAME.rc
    name=$1
    cfg=$2
    limit_s=$3
    shift 3
    # A hung run is stopped as Ctrl-C would (it still writes its logs), then killed. Niced (busybox
    # has renice, not nice): on two emulated CPUs jetagent's start would otherwise delay vivid's
    # frame thread, and vivid skips the frames it is late for; a real camera does not wait for the
    # CPU.
    started=$(now_ns)
    ticks=$(cpu_ticks)
    /bin/jetagent_vivid_check stalls "/out/$name.stalls" "$LATE_MS" &
    watcher=$!
    sh -c 'renice -n 19 -p $$ >/dev/null && exec "$@"' sh \
        timeout -s INT "$limit_s" /bin/jetagent run --config "$cfg" \
        --as-fast-as-possible --log-dir "/out/$name" "$@" >"/out/$name.log" 2>&1 &
    pid=$!
    ( sleep $((limit_s + 15)) && kill -KILL $pid 2>/dev/null ) &
    killer=$!
    wait $pid
    echo $? >"/out/$name.rc"
    kill $killer 2>/dev/null
    kill -TERM $watcher
    wait $watcher
    took_s=$(seconds_since "$started")
    # shellcheck disable=SC2086 # two numbers
    echo "$took_s $limit_s $(busy_percent $ticks)" >"/out/$name.time"
    grep -E '^(run|camera|  cam[0-9]) ' "/out/$name.log"
}

for format in $FORMATS; do
    cfg=/jetagent/tests/vm/vivid-$format.yaml
    sed "s/^\(    format:\) YUYV /\1 $format /" "$config" >"$cfg"
    grep -q "format: $format " "$cfg" || mark "cannot set format $format in $cfg"
    t=$(now_ns)
    mark "scenario capture-$format start"
    run "capture-$format" "$cfg" "$run_timeout_s" --source v4l2:///dev/video0 --frames "$FRAMES"
    rc=$(cat "/out/capture-$format.rc")
    mark "scenario capture-$format done rc=$rc in $(seconds_since "$t") s"
done

# Recovery: wait until the pipeline runs (its "running N task(s)" line; it starts streaming at
# once), then, two seconds later, take the driver away for about two seconds. Not the frame log:
# it is written in blocks, and its first line came after the last frame was captured.
events=/out/recovery.events
t=$(now_ns)
mark "scenario recovery start"
run recovery "$config" "$recovery_timeout_s" --source v4l2:///dev/video0 \
    --frames "$RECOVERY_FRAMES" &
runner=$!
waited=0
while ! grep -q 'running .* task' /out/recovery.log 2>/dev/null &&
    [ $waited -lt $((recovery_timeout_s * 10)) ] && kill -0 $runner 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
done
sleep 2
echo "unload_ns=$(now_ns)" >>$events
if rmmod vivid 2>/dev/null; then
    echo "unload=rmmod" >>$events
else
    echo "unload=unbind (rmmod: in use, refcnt $(cat /sys/module/vivid/refcnt))" >>$events
    echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind
    echo "unbound_ns=$(now_ns)" >>$events
    waited=0
    until [ "$(cat /sys/module/vivid/refcnt)" = 0 ] || [ $waited -ge 100 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    echo "released_ns=$(now_ns) refcnt=$(cat /sys/module/vivid/refcnt)" >>$events
    rmmod vivid
    echo "rmmod_rc=$?" >>$events
fi
echo "unloaded_ns=$(now_ns)" >>$events
sleep 2
# shellcheck disable=SC2086
modprobe vivid $VIVID_ARGS
echo "modprobe_rc=$?" >>$events
echo "reloaded_ns=$(now_ns)" >>$events
wait $runner
mark "scenario recovery done rc=$(cat /out/recovery.rc) in $(seconds_since "$t") s"

# Two devices: vivid again, now with two webcams, whose capture nodes are /dev/video0 and
# /dev/video1 (vivid.0 and vivid.1, registered in that order), read as two streams of one task.
t=$(now_ns)
mark "scenario two-devices start"
# shellcheck disable=SC2086 # VIVID_TWO_ARGS holds several module parameters
if rmmod vivid && modprobe vivid $VIVID_TWO_ARGS && [ -e /dev/video1 ]; then
    mark "two devices: $(cat /sys/class/video4linux/video0/name), $(cat /sys/class/video4linux/video1/name)"
    run two-devices /jetagent/tests/vm/vivid-two.yaml "$two_timeout_s" --frames "$TWO_FRAMES"
else
    mark "cannot load vivid with two devices: $(echo /sys/class/video4linux/*)"
    echo "vivid with $VIVID_TWO_ARGS did not give /dev/video0 and /dev/video1" >/out/two-devices.log
    echo 1 >/out/two-devices.rc
fi
mark "scenario two-devices done rc=$(cat /out/two-devices.rc) in $(seconds_since "$t") s"
finish
