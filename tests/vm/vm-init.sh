#!/bin/sh
# /init of the vivid test VM (busybox sh): loads vivid, runs jetagent's capture scenarios, hands
# the logs out on ttyS1 as a tar and powers off. vivid-test.sh builds the VM and checks the logs.
#
# Scenarios, each a real `jetagent run --as-fast-as-possible` (every captured frame reaches the
# task and the log) on v4l2:///dev/video0, 640x480 at the config's rate:
#   capture-FORMAT  FRAMES frames in each of FORMATS (from /vivid-test.env)
#   recovery        RECOVERY_FRAMES frames in YUYV; two seconds after the first frame is logged
#                   the driver is unloaded and, two seconds later, loaded again: rmmod, or, while
#                   jetagent holds the device open (rmmod then fails: in use), unbind the platform
#                   device first, which fails the open file with ENODEV so jetagent closes it, then
#                   rmmod. recovery.events has the times (CLOCK_MONOTONIC ns).
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
run() { # NAME CONFIG ARGS...: one jetagent run, its output in /out/NAME.log, status in NAME.rc
    name=$1
    cfg=$2
    shift 2
    # A hung run is stopped as Ctrl-C would (it still writes its logs), then killed. Niced (busybox
    # has renice, not nice): on two emulated CPUs the CNN would otherwise delay vivid's frame
    # thread, and vivid skips the frames it is late for; a real camera does not wait for the CPU.
    sh -c 'renice -n 19 -p $$ >/dev/null && exec "$@"' sh \
        timeout -s INT "$RUN_TIMEOUT_S" /bin/jetagent run --config "$cfg" \
        --source v4l2:///dev/video0 --as-fast-as-possible --log-dir "/out/$name" "$@" \
        >"/out/$name.log" 2>&1 &
    pid=$!
    ( sleep $((RUN_TIMEOUT_S + 15)) && kill -KILL $pid 2>/dev/null ) &
    killer=$!
    wait $pid
    echo $? >"/out/$name.rc"
    kill $killer 2>/dev/null
    grep -E '^(run|camera) ' "/out/$name.log"
}

for format in $FORMATS; do
    cfg=/jetagent/tests/vm/vivid-$format.yaml
    sed "s/^\(    format:\) YUYV /\1 $format /" "$config" >"$cfg"
    grep -q "format: $format " "$cfg" || mark "cannot set format $format in $cfg"
    t=$(now_ns)
    mark "scenario capture-$format start"
    run "capture-$format" "$cfg" --frames "$FRAMES"
    rc=$(cat "/out/capture-$format.rc")
    mark "scenario capture-$format done rc=$rc in $(seconds_since "$t") s"
done

# Recovery: wait until frames flow, then take the driver away for about two seconds. The log
# trails capture (frames queue for the CNN), so its first line means capture is well under way.
events=/out/recovery.events
t=$(now_ns)
mark "scenario recovery start"
run recovery "$config" --frames "$RECOVERY_FRAMES" &
runner=$!
waited=0
while [ "$(cat /out/recovery/*/shapes.frames.csv 2>/dev/null | wc -l)" -lt 2 ] &&
    [ $waited -lt 600 ] && kill -0 $runner 2>/dev/null; do
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
finish
