#!/bin/sh
# The live view's JPEG encoder, measured: `jetagent run --serve` on the demo model with a
# synthetic WIDTHxHEIGHT source at FPS, one client reading /video.mjpg for SECONDS, then the
# video's own CPU time (CLOCK_THREAD_CPUTIME_ID: the view thread's hand-off of each frame and the
# encoder thread's encodings, /api/status video.encoder_cpu_s) over the time it had a viewer
# (TurboJPEG, 4:2:0, quality 75). Prints the configuration beside the figures.
#
#   tools/bench_live_encoder.sh [JETAGENT] [WIDTH HEIGHT FPS SECONDS]
#
# Needs curl and python3. The goal (issue 24): at most one core-percent per 10 fps at 640x480.
set -eu
jetagent=${1:-build/src/jetagent}
width=${2:-640} height=${3:-480} fps=${4:-10} seconds=${5:-20}
source=$(cd "$(dirname "$0")/.." && pwd)
. "$source/tests/demo_run.sh"
dir=$(mktemp -d)
trap 'kill "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; rm -rf "$dir"' EXIT
cat >"$dir/c.yaml" <<YAML
source: {uri: "synthetic://shapes", width: $width, height: $height, fps: $fps, seed: 5}
run: {duration_s: $((seconds + 30))}
$(demo_tasks_yaml "$source")
logging: {dir: $dir/logs, status_interval_s: 0}
power: {sampling: off}
http: {listen: "127.0.0.1:0"}
YAML
"$jetagent" run -c "$dir/c.yaml" >"$dir/out" 2>&1 &
agent=$!
wait_for_live_url "$agent" "$dir/out"
sleep 3 # the model loads, frames flow
curl -s --max-time "$seconds" "${url}video.mjpg" >/dev/null || true
curl -s "${url}api/status" | python3 -c '
import json, sys
s = json.load(sys.stdin)
v = s["video"]
fps, seconds = float(sys.argv[1]), sys.argv[2]
cpu, watched, frames = v["encoder_cpu_s"], v["encoder_watched_s"], v["frames_encoded"]
host = s["run"]["context"]["cpu"]
width, height = v["width"], v["height"]
share = 100 * cpu / watched
print(f"config: {width}x{height} at {fps:g} fps (synthetic://shapes), JPEG quality 75, one client, "
      f"{seconds} s; host CPU: {host}")
print(f"encoder: {frames} frames, {cpu:.3f} s CPU over {watched:.1f} s watched = {share:.2f}% of "
      f"a core; {1000 * cpu / max(frames, 1):.2f} ms a frame; {share * 10 / fps:.2f} core-percent "
      f"per 10 fps")
' "$fps" "$seconds"
