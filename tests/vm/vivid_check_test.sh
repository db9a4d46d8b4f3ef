#!/usr/bin/env bash
# jetagent_vivid_check on made-up run logs: a clean run passes, and each defect the VM test must
# catch (a sequence gap, a slow rate, a device drop, a timestamp going back, a negative wait, an
# unlogged frame, a missing reconnect; for two devices in one task, the same in the second stream,
# a stream missing, the wrong format) fails it; and the guest-side `stalls` watcher counts late
# wakes. Needs no VM, so it runs everywhere the checker builds.
set -uo pipefail
checker=${1:?usage: vivid_check_test.sh JETAGENT_VIVID_CHECK}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

readonly kFps=25 kFrames=240 kStartNs=5000000000
readonly kPeriodNs=$((1000000000 / kFps))
failures=0

# make DIR FRAMES [awk assignments...]: one run's logs. Knobs: gap_at (frame_id jumps by one),
# period_ns, back_at (capture_ns steps back), negative_at (wait_ms below 0, as a capture time after
# the worker's start gives), captured_extra, dropped, disconnects, reconnects,
# pause_at and pause_ns (capture stops for pause_ns before that frame), format. Nanoseconds are
# printed with %.0f: mawk's %d stops at 2^31.
make() {
    local dir=$1/20260101T000000Z frames=$2
    shift 2
    mkdir -p "$dir"
    awk -v frames="$frames" -v start="$kStartNs" -v period_ns="$kPeriodNs" -v gap_at=-1 \
        -v back_at=-1 -v negative_at=-1 -v pause_at=-1 -v pause_ns=0 "$@" 'BEGIN {
        print "frame_id,capture_ns,wait_ms,preprocess_ms,inference_ms,compute_ms,postprocess_ms," \
            "e2e_ms,batch,top1_label,top1_score,truth_label,correct,deadline_miss,cold_start,ok"
        id = 0; t = start
        for (i = 0; i < frames; i++) {
            if (i == gap_at) id++
            if (i == pause_at) t += pause_ns
            ts = (i == back_at) ? t - 2 * period_ns : t
            wait = (i == negative_at) ? -45.9 : 1.0
            printf "%d,%.0f,%.1f,1.0,1.0,1.0,0.0,3.0,1,circle,0.9,,0,0,%d,1\n", id, ts, wait, i == 0
            id++; t += period_ns
        }
    }' >"$dir/shapes.frames.csv"
    awk -v frames="$frames" -v captured_extra=0 -v dropped=0 -v disconnects=0 -v reconnects=0 \
        -v format=YUYV "$@" 'BEGIN {
        printf "{\"source\": {\"uri\": \"v4l2:///dev/video0\", \"kind\": \"v4l2\", \"width\": 640,"
        printf " \"height\": 480, \"fps\": 25.0, \"live\": true, \"frames_captured\": %d,",
            frames + captured_extra
        printf " \"detail\": \"/dev/video0 (vivid, vivid) %s 640x480 @ 25 fps, 4 buffers\",", format
        printf " \"stats\": {\"delivered\": %d, \"dropped_by_device\": %d, \"stalls\": 0,",
            frames, dropped
        printf " \"disconnects\": %d, \"reconnects\": %d, \"delivered_fps\": 25.0}}}\n",
            disconnects, reconnects
    }' >"$dir/summary.json"
}

# expect STATUS NAME ARGS...: the checker's exit status must be STATUS.
expect() {
    local want=$1 name=$2 got
    shift 2
    "$checker" "$@" >"$root/out.txt" 2>&1
    got=$?
    if [ "$got" = "$want" ]; then
        echo "ok   $name (exit $got)"
    else
        echo "FAIL $name: expected exit $want, got $got"
        sed 's/^/    /' "$root/out.txt"
        failures=$((failures + 1))
    fi
}

capture=(--format YUYV --width 640 --height 480 --fps "$kFps" --min-frames 200)
make "$root/good" $kFrames
expect 0 "clean capture passes" capture "$root/good" "${capture[@]}"
make "$root/gap" $kFrames -v gap_at=100
expect 1 "a sequence gap fails" capture "$root/gap" "${capture[@]}"
make "$root/few" 150
expect 1 "too few frames fail" capture "$root/few" "${capture[@]}"
make "$root/slow" $kFrames -v period_ns=$((kPeriodNs * 110 / 100))
expect 1 "a rate 10% low fails" capture "$root/slow" "${capture[@]}"
make "$root/drop" $kFrames -v dropped=3
expect 1 "device drops fail" capture "$root/drop" "${capture[@]}"
make "$root/back" $kFrames -v back_at=50
expect 1 "a timestamp stepping back fails" capture "$root/back" "${capture[@]}"
make "$root/negative" $kFrames -v negative_at=0
expect 1 "a negative wait_ms fails" capture "$root/negative" "${capture[@]}"
make "$root/unlogged" $kFrames -v captured_extra=1
expect 1 "a captured frame missing from the log fails" capture "$root/unlogged" "${capture[@]}"
make "$root/format" $kFrames -v format=NV12
expect 1 "another negotiated format fails" capture "$root/format" "${capture[@]}"
expect 2 "no run directory is an error" capture "$root/none" "${capture[@]}"

# Recovery: 100 frames, a 3 s outage, 150 more; the driver came back 1 s into the outage.
readonly kPauseNs=3000000000
reloaded=$((kStartNs + 100 * kPeriodNs + 1000000000))
recovery=(--format YUYV --width 640 --height 480 --fps "$kFps" --min-frames 25
    --reloaded-ns "$reloaded" --min-frames-after 50)
make "$root/recovered" 250 -v pause_at=100 -v pause_ns=$kPauseNs -v gap_at=100 \
    -v disconnects=1 -v reconnects=1
expect 0 "a recovered run passes" recovery "$root/recovered" "${recovery[@]}"
make "$root/lost" 100 -v disconnects=1
expect 1 "no frames after the reload fail" recovery "$root/lost" "${recovery[@]}"
make "$root/unnoticed" 250 -v pause_at=100 -v pause_ns=$kPauseNs
expect 1 "a run without a counted disconnect fails" recovery "$root/unnoticed" "${recovery[@]}"

# Two devices as two streams of one task: make_streams DIR FRAMES [awk assignments...] writes
# their rows interleaved, with the stream column, and the summary's per-stream entries, and
# DIR.log the run's lines naming each stream's negotiated format. Knobs: gap_at (cam1's frame_id
# jumps by one there), unlogged (cam1 captured one more frame than it logged), dropped (cam1's
# device drops), only_cam0 (no row of cam1), cam1_format, served (the task's streams_served).
make_streams() {
    local dir=$1/20260101T000000Z frames=$2 log=$1.log
    shift 2
    mkdir -p "$dir"
    awk -v frames="$frames" -v start="$kStartNs" -v period_ns="$kPeriodNs" -v gap_at=-1 \
        -v only_cam0=0 "$@" 'BEGIN {
        print "frame_id,capture_ns,wait_ms,preprocess_ms,inference_ms,compute_ms,postprocess_ms," \
            "e2e_ms,batch,top1_label,top1_score,truth_label,correct,deadline_miss,cold_start,ok," \
            "stream"
        id1 = 0
        for (i = 0; i < frames; i++) {
            t = start + i * period_ns
            printf "%d,%.0f,1.0,1.0,1.0,1.0,0.0,3.0,1,red,0.9,,0,0,%d,1,cam0\n", i, t, i == 0
            if (only_cam0) continue
            if (i == gap_at) id1++
            printf "%d,%.0f,1.0,1.0,1.0,1.0,0.0,3.0,1,red,0.9,,0,0,%d,1,cam1\n", id1, t + 7000000,
                i == 0
            id1++
        }
    }' >"$dir/planes.frames.csv"
    awk -v frames="$frames" -v unlogged=0 -v dropped=0 -v only_cam0=0 \
        -v served='["cam0","cam1"]' "$@" 'BEGIN {
        cam1 = only_cam0 ? 0 : frames
        printf "{\"source\": {\"uri\": \"v4l2:///dev/video0\", \"kind\": \"v4l2\", \"width\": 640,"
        printf " \"height\": 480, \"fps\": 25.0, \"live\": true, \"frames_captured\": %d},", frames
        printf " \"streams\": ["
        for (s = 0; s < 2; s++) {
            n = s ? cam1 + unlogged : frames
            printf "%s{\"name\": \"cam%d\", \"uri\": \"v4l2:///dev/video%d\", \"kind\": \"v4l2\",",
                s ? ", " : "", s, s
            printf " \"width\": 640, \"height\": 480, \"fps\": 25.0, \"live\": true,"
            printf " \"frames_captured\": %d, \"stats\": {\"delivered\": %d,", n, n
            printf " \"dropped_by_device\": %d, \"stalls\": 0, \"disconnects\": 0,",
                s ? dropped : 0
            printf " \"reconnects\": 0, \"delivered_fps\": 25.0}}"
        }
        printf "], \"tasks\": [{\"name\": \"planes\", \"streams_served\": %s,", served
        printf " \"frames\": {\"processed\": %d}, \"streams\": [", frames + cam1
        printf "{\"name\": \"cam0\", \"frames\": {\"processed\": %d}},", frames
        printf " {\"name\": \"cam1\", \"frames\": {\"processed\": %d}}]}]}\n", cam1
    }' >"$dir/summary.json"
    awk -v cam1_format=NV12 "$@" 'BEGIN {
        print "info [agent] running 1 task(s) on 2 streams; logs in x"
        print "info [agent] stream cam0: v4l2:///dev/video0 (v4l2), /dev/video0 (vivid, vivid)" \
            " YUYV 640x480 @ 25 fps, 8 buffers"
        print "info [agent] stream cam1: v4l2:///dev/video1 (v4l2), /dev/video1 (vivid, vivid) " \
            cam1_format " 640x480 @ 25 fps, 8 buffers"
    }' >"$log"
}

streams_args() { # DIR: the streams check of make_streams DIR
    echo "streams $1 --streams cam0:YUYV,cam1:NV12 --width 640 --height 480 --fps $kFps"
    echo "--min-frames 200 --run-log $1.log"
}
make_streams "$root/two" $kFrames
# shellcheck disable=SC2046 # the arguments, split
expect 0 "two clean streams pass" $(streams_args "$root/two")
make_streams "$root/two-gap" $kFrames -v gap_at=100
# shellcheck disable=SC2046
expect 1 "a sequence gap in the second stream fails" $(streams_args "$root/two-gap")
make_streams "$root/two-unlogged" $kFrames -v unlogged=1
# shellcheck disable=SC2046
expect 1 "a frame of the second stream missing from the log fails" \
    $(streams_args "$root/two-unlogged")
make_streams "$root/two-drop" $kFrames -v dropped=2
# shellcheck disable=SC2046
expect 1 "device drops on the second stream fail" $(streams_args "$root/two-drop")
make_streams "$root/one" $kFrames -v only_cam0=1
# shellcheck disable=SC2046
expect 1 "no frame of the second stream fails" $(streams_args "$root/one")
make_streams "$root/two-format" $kFrames -v cam1_format=YUYV
# shellcheck disable=SC2046
expect 1 "the second stream in another format fails" $(streams_args "$root/two-format")
make_streams "$root/two-served" $kFrames -v 'served=["cam0"]'
# shellcheck disable=SC2046
expect 1 "a task not serving both streams fails" $(streams_args "$root/two-served")

# stalls: counts its 10 ms sleeps, and those that ended later than LATE_MS (every one, for a
# threshold of a nanosecond), until SIGTERM.
stalls() { # LATE_MS: runs the watcher for half a second; its report in $root/stalls.txt
    "$checker" stalls "$root/stalls.txt" "$1" &
    local pid=$!
    sleep 0.5
    kill -TERM $pid
    wait $pid
}
if stalls 0.000001 && grep -Eq '^wakes=([1-9][0-9]+) late_wakes=\1 worst_late_ms=' "$root/stalls.txt"
then
    echo "ok   stalls counts every wake late past a 1 ns threshold ($(cat "$root/stalls.txt"))"
else
    echo "FAIL stalls with a 1 ns threshold: $(cat "$root/stalls.txt" 2>/dev/null)"
    failures=$((failures + 1))
fi
if stalls 1000 && grep -Eq '^wakes=[1-9][0-9]+ late_wakes=0 ' "$root/stalls.txt"; then
    echo "ok   stalls counts no wake late past 1 s ($(cat "$root/stalls.txt"))"
else
    echo "FAIL stalls with a 1 s threshold: $(cat "$root/stalls.txt" 2>/dev/null)"
    failures=$((failures + 1))
fi

[ "$failures" = 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "passed"
