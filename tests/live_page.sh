#!/bin/sh
# The live web view in a real browser (CTest LivePage.Chromium): `jetagent run --serve` on the demo
# model against a fixture Orin Nano's sysfs tree (power rails and thermal zones, so all three
# charts have data), with a token, then tools/check_live_page.py opens the page in headless
# chromium while the run goes on: the page sets up, its charts draw and update, the video element
# receives frames, no console error; a screenshot (OUT_DIR/live.png). With `streams`
# (LivePage.ChromiumStreams), the run reads two streams, front and rear, batched together: the
# video is their mosaic, and the page's stream table must show a row for each.
#
#   live_page.sh JETAGENT PYTHON3 CHECK_SCRIPT SOURCE_DIR OUT_DIR [streams]
#
# Exit 0 when the page passes, 77 (CTest's skip) when Debian's libjs-chart.js or chromium is
# missing, 1 otherwise.
set -eu
jetagent=$1 python=$2 check=$3 source=$4 out=$5 mode=${6:-}
. "$(dirname "$0")/demo_run.sh"

need_chart_js
rm -rf "$out"
mkdir -p "$out"
"$jetagent" -q power --fixture orin-nano-jp6 --sysfs-root "$out/board" -d 0.2 >/dev/null
token=live-page-token
if [ "$mode" = streams ]; then
    sources='sources:
  - {name: front, uri: "synthetic://shapes", width: 640, height: 480, fps: 15, seed: 5}
  - {name: rear, uri: "synthetic://shapes", width: 640, height: 480, fps: 15, seed: 6}'
    # One engine batch of the two streams' newest frames.
    tasks=$(printf '%s\n    engine: {batch: 2}' "$(demo_tasks_yaml "$source")")
    want="--streams front,rear"
else
    sources='source: {uri: "synthetic://shapes", width: 640, height: 480, fps: 15, seed: 5}'
    tasks=$(demo_tasks_yaml "$source")
    want=
fi
cat >"$out/c.yaml" <<YAML
$sources
run: {duration_s: 90}
$tasks
logging: {dir: $out/logs, status_interval_s: 0}
power: {sysfs_root: "$out/board"}
http: {listen: "127.0.0.1:0", token: $token}
YAML
"$jetagent" run -c "$out/c.yaml" >"$out/run.out" 2>"$out/run.err" &
agent=$!
stop() { kill "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
trap stop EXIT
wait_for_live_url "$agent" "$out/run.out" "$out/run.err"
# shellcheck disable=SC2086 # $want is an option and its value, or nothing
"$python" "$check" "${url}?token=$token" --screenshot "$out/live.png" --seconds 45 $want
