#!/usr/bin/env bash
# The CPU engines side by side: for each model and batch, `jetagent compare` runs OpenCV DNN (the
# reference) and xnnpack (the candidate) on the same inputs, taking turns batch by batch so that
# drift on a shared machine hits both alike, and this prints both medians, the speed-up and
# the relative error, then the geometric mean of the speed-ups, with the configuration above.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/bench-cpu-engines.sh [--busy] [--runs N] [--batches "1 8"] [MODEL.onnx...]

Models default to the zoo's ten exports with BatchNorm folded, models/reference/<model>.folded.onnx
(/usr/bin/python3 tools/export_torchvision.py --fold-batchnorm).
  --runs N        timed runs per engine and cell (default 20), after 3 warm-up runs
  --batches LIST  batch sizes (default "1 8")
  --busy          keep one extra busy thread running on the machine throughout (a competing
                  process, as the agent's capture and preprocessing threads are), to see how
                  each engine's thread pool copes with a core taken
Environment: JETAGENT (default build/src/jetagent).
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jetagent=${JETAGENT:-$root/build/src/jetagent}
runs=20
batches="1 8"
busy=0
models=()
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --busy) busy=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
    esac
done
if [ ${#models[@]} -eq 0 ]; then
    for m in mobilenet_v2 resnet18 resnet50 squeezenet1_1 alexnet vgg16 densenet121 \
        shufflenet_v2_x1_0 resnext50_32x4d r3d_18; do
        models+=("$root/models/reference/$m.folded.onnx")
    done
fi
for m in "${models[@]}"; do
    [ -f "$m" ] || { echo "bench-cpu-engines: $m is missing (run /usr/bin/python3 tools/export_torchvision.py --fold-batchnorm)" >&2; exit 2; }
done
[ -x "$jetagent" ] || { echo "bench-cpu-engines: $jetagent is missing (tools/dev.sh build)" >&2; exit 2; }

work=$(mktemp -d)
busy_pid=""
cleanup() {
    [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
if [ "$busy" = 1 ]; then
    bash -c 'while :; do :; done' &
    busy_pid=$!
fi

echo "== CPU engines: opencv (reference) and xnnpack (candidate), jetagent compare"
echo "host      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
"$jetagent" backends | grep -E '^(xnnpack|opencv) ' | sed 's/^/backend   /'
echo "threads   both engines' default (all cores; xnnpack runs models under 50 M MACs on one)"
echo "method    $runs timed runs per engine and cell after 3 warm-up runs, the engines taking turns"
echo "          batch by batch; median of Session::run wall time"
[ "$busy" = 1 ] && echo "load      one competing busy thread (pid $busy_pid) throughout"
echo
printf '%-22s %5s %12s %12s %9s %11s\n' model batch "opencv ms" "xnnpack ms" speed-up "rel error"
logsum=0
cells=0
for m in "${models[@]}"; do
    name=$(basename "$m" .onnx)
    name=${name%.folded}
    for b in $batches; do
        json="$work/$name-$b.json"
        if ! "$jetagent" compare "$m" --reference "opencv:cpu:fp32,batch=$b" \
            --candidate "xnnpack:cpu:fp32,batch=$b" --frames $((runs * b)) --warmup 3 \
            --json "$json" >"$work/out" 2>&1; then
            printf '%-22s %5s   compare failed: %s\n' "$name" "$b" "$(tail -1 "$work/out")"
            continue
        fi
        read -r ref cand err < <(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
errs = [o.get("relative_error", 0) for o in d["outputs"]]
print(d["reference"]["latency_ms"]["median"], d["candidate"]["latency_ms"]["median"], max(errs))' "$json")
        ratio=$(awk -v r="$ref" -v c="$cand" 'BEGIN { printf "%.2f", r / c }')
        printf '%-22s %5s %12.3f %12.3f %8sx %11.2e\n' "$name" "$b" "$ref" "$cand" "$ratio" "$err"
        logsum=$(awk -v s="$logsum" -v q="$ratio" 'BEGIN { printf "%.9f", s + log(q) }')
        cells=$((cells + 1))
    done
done
[ $cells -gt 0 ] && awk -v s="$logsum" -v n="$cells" \
    'BEGIN { printf "\ngeometric mean of the speed-ups over %d cells: %.2fx\n", n, exp(s / n) }'
