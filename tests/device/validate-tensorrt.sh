#!/usr/bin/env bash
# Validates the tensorrt backend on a Jetson, where no test here can reach: run it on the board from
# the repository root. It builds jetagent with TensorRT, exports torchvision models and compares
# TensorRT engines against the CPU backend with `jetagent compare`. Engine builds take minutes each
# on a Nano, far less on an Orin: expect roughly 30-60 minutes there for the default set.
#
#   tests/device/validate-tensorrt.sh [--build DIR] [--models "mobilenet_v2 resnet18 ..."]
#       [--set cnns|modern|transformers] [--reference ENGINE] [--onnx DIR] [--inputs DIR]
#       [--calibration DIR] [--frames N] [--streams N] [--out DIR]
#
# 1. Prerequisites: CUDA (nvcc), TensorRT's NvInfer.h, cmake and ninja, and python3 with torch and
#    torchvision for the export (not with --onnx; the interpreter is $PYTHON, default python3). It
#    says what is missing and which JetPack package provides it, and stops.
# 2. Builds jetagent into --build (default build-tensorrt) with -DJETAGENT_TENSORRT=ON (configure
#    fails without TensorRT) and checks that `jetagent backends` lists tensorrt as available.
# 3. Exports --models (default: the cnns set, mobilenet_v2 resnet18 resnet50 squeezenet1_1
#    shufflenet_v2_x1_0) with tools/export_torchvision.py --fold-batchnorm (the plain export
#    torch.onnx.export makes) into models/reference/<model>.folded.onnx, or takes <model>.onnx from
#    --onnx DIR. --set modern (efficientnet_b0 efficientnet_v2_s regnet_y_800mf mobilenet_v3_large)
#    and --set transformers (vit_b_16 swin_t convnext_tiny maxvit_t) are the exporter's sets of the
#    same names, and their models wherever --models names them, exported as they come
#    (models/reference/<model>.onnx): TensorRT's parser takes
#    their decomposed LayerNorm and GELU as they are, and jetagent's TensorRT preparation folds
#    constants only (Swin's masks, shapes), never those patterns.
#    The export has torchvision's random weights (nothing is downloaded), whose logits are nearly
#    tied: fp16 may then flip more top-1 answers than a trained model would. Give --onnx a
#    directory of models with trained weights for a stricter test.
# 4. Inputs: --frames (default 200) synthetic frames saved with `jetagent capture` (or --inputs DIR,
#    your own images), and as many for int8 calibration with another seed (or --calibration DIR).
# 5. Per model, `jetagent compare --json` against --reference (default: xnnpack:cpu:fp32 where
#    `jetagent backends` lists xnnpack as available, else opencv:cpu:fp32; OpenCV DNN 4.x loads
#    neither Swin nor ConvNeXt, so the transformers set needs xnnpack): tensorrt fp32 (relative
#    error <= 1e-2 for the modern and transformers sets' models, whichever option named them,
#    whose deep stacks of products TensorRT runs in TF32 on Ampere GPUs unless told otherwise — a
#    bound not yet checked on a board; <= 1e-3 for any other), fp16 (top-1 agreement >= 99%), int8
#    calibrated (agreement reported, not judged).
#    The board's CPU in int8: the first model on xnnpack:cpu:int8 (calibrated) against
#    xnnpack:cpu:fp32, a timing line (both medians, their ratio, top-1 agreement; not judged).
#    Then the first model's fp16 again: its plan must come from the cache (the JSON's
#    candidate.plan_from_cache). On boards with DLA cores (Xavier, Orin AGX/NX), the first
#    model in fp16 on dla0 with GPU fallback (top-1 >= 99%).
# 6. A table: model x precision x device -> median / p99 ms, mean H2D / compute / D2H ms,
#    relative error and top-1 agreement; every compare's JSON and output stays in --out (default
#    tensorrt-validation-DATE).
# 7. With --streams N: the first model's TensorRT fp16 engine over N synthetic 640x480 streams at
#    30 fps, batched (one engine of batch N serving every stream) against separate (N engines of
#    batch 1, one per stream, in the same process), and over one stream for the baseline:
#    tools/bench_streams.py with the same configs as on a PC (--streams 1,N), its plans in the
#    cache of step 5. It prints the table (fps per stream, drops, p50/p99 end to end, CPU per
#    frame, peak RSS, held at 30 fps) and the largest N held per mode; PASS when every run was
#    measured (the figures are reported, not judged). Its output is in --out/streams.txt.
# Prints a PASS/FAIL/SKIP table and exits 1 if any check failed (2 on a usage error).
set -uo pipefail

usage() { sed -n '2,/^set -uo pipefail/{/^set -uo/!p}' "$0"; }
build="build-tensorrt"
models=""
set_name=""
reference=""
onnx_dir=""
inputs=""
calibration=""
frames=200
streams=""
out="tensorrt-validation-$(date +%Y%m%d-%H%M%S)"
python="${PYTHON:-python3}"
# A usage error exits 2, a missing option value included.
value() { # OPTION [VALUE...]
    [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1 needs a value (see --help)" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
    case "$1" in
    --build) value "$@"; build="$2"; shift 2 ;;
    --models) value "$@"; models="$2"; shift 2 ;;
    --set)
        value "$@"
        [ -z "$set_name" ] || { echo "--set is given twice" >&2; exit 2; }
        set_name="$2"; shift 2 ;;
    --reference) value "$@"; reference="$2"; shift 2 ;;
    --onnx) value "$@"; onnx_dir="$2"; shift 2 ;;
    --inputs) value "$@"; inputs="$2"; shift 2 ;;
    --calibration) value "$@"; calibration="$2"; shift 2 ;;
    --frames) value "$@"; frames="$2"; shift 2 ;;
    --streams) value "$@"; streams="$2"; shift 2 ;;
    --out) value "$@"; out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$frames" in ''|*[!0-9]*|0) echo "--frames must be a positive whole number" >&2; exit 2 ;; esac
case "$streams" in ''|[1-9]|[1-5][0-9]|6[0-4]) ;; *) echo "--streams must be a whole number from 1 to 64" >&2; exit 2 ;; esac
cnn_models="mobilenet_v2 resnet18 resnet50 squeezenet1_1 shufflenet_v2_x1_0"
modern_models="efficientnet_b0 efficientnet_v2_s regnet_y_800mf mobilenet_v3_large"
transformer_models="vit_b_16 swin_t convnext_tiny maxvit_t"
case "${set_name:-cnns}" in
cnns) set_models="$cnn_models" ;;
modern) set_models="$modern_models" ;;
transformers) set_models="$transformer_models" ;;
*) echo "unknown --set $set_name: cnns, modern or transformers" >&2; exit 2 ;;
esac
if [ -n "$set_name" ] && [ -n "$models" ]; then
    echo "give --set or --models, not both" >&2
    exit 2
fi
models="${models:-$set_models}"
# Per model, whatever picked it: the modern and transformers sets' models are exported as they come
# and held to fp32's looser bound; every other model is exported with BatchNorm folded.
as_exported() { # MODEL
    case " $modern_models $transformer_models " in *" $1 "*) return 0 ;; esac
    return 1
}
[ -n "$models" ] || { echo "--models is empty" >&2; exit 2; }
for d in "$onnx_dir" "$inputs" "$calibration"; do
    [ -z "$d" ] || [ -d "$d" ] || { echo "not a directory: $d" >&2; exit 2; }
done
if [ ! -f CMakeLists.txt ] || [ ! -f tools/export_torchvision.py ]; then
    echo "run this from the root of a jetagent checkout" >&2
    exit 2
fi
if [ -e "$out" ]; then
    echo "--out $out exists; give a new directory (earlier results are kept)" >&2
    exit 2
fi

# The check table (record, finish) and json_value.
# shellcheck source=tests/device/checks.sh
. "$(dirname "$0")/checks.sh"


echo "== 1. prerequisites"
missing=0
need() { # CHECK DETAIL-WHEN-MISSING
    record FAIL "$1" "$2"
    missing=$((missing + 1))
}
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
    record PASS "CUDA" "$nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
else
    need "CUDA" "no nvcc on PATH nor /usr/local/cuda/bin/nvcc: JetPack's CUDA toolkit is missing (sudo apt install nvidia-jetpack, or cuda-toolkit-<version>); no GPU, no TensorRT here"
fi
nvinfer=""
for d in /usr/include/aarch64-linux-gnu /usr/include/x86_64-linux-gnu /usr/include \
    /usr/local/tensorrt/include /usr/local/TensorRT/include; do
    [ -f "$d/NvInfer.h" ] && { nvinfer="$d/NvInfer.h"; break; }
done
if [ -n "$nvinfer" ]; then
    record PASS "TensorRT headers" "$nvinfer ($(sed -n 's/^#define NV_TENSORRT_MAJOR \([0-9]*\).*/\1/p' \
        "$(dirname "$nvinfer")/NvInferVersion.h" 2>/dev/null | head -n 1).x)"
else
    need "TensorRT headers" "NvInfer.h not found: TensorRT is missing (JetPack: sudo apt install nvidia-tensorrt-dev, or libnvinfer-dev libnvonnxparsers-dev)"
fi
for tool in cmake ninja python3 $([ "$python" = python3 ] || echo "$python"); do
    if command -v "$tool" >/dev/null; then
        record PASS "$tool" "$(command -v "$tool")"
    else
        need "$tool" "missing (sudo apt install $([ "$tool" = ninja ] && echo ninja-build || echo "$tool"))"
    fi
done
if [ -z "$onnx_dir" ] && command -v "$python" >/dev/null; then
    if versions=$("$python" -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__)' 2>/dev/null); then
        record PASS "torch, torchvision" "$versions"
    else
        need "torch, torchvision" "$python cannot import torch and torchvision, needed to export the models: install NVIDIA's PyTorch wheel for your JetPack (docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform) and a matching torchvision, or give --onnx DIR with exported models"
    fi
fi
if [ "$missing" -gt 0 ]; then
    echo "stopping: $missing prerequisite(s) missing (this script runs on a Jetson with JetPack)"
    finish
fi

echo "== 2. build with TensorRT into $build"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJETAGENT_TENSORRT=ON \
        > "$out/configure.txt" 2>&1 &&
    ninja -C "$build" jetagent > "$out/build.txt" 2>&1; then
    record PASS "build" "$build/src/jetagent"
else
    record FAIL "build" "configure or build failed; the last lines (all in $out/build.txt, configure.txt):"
    tail -n 12 "$out/configure.txt" "$out/build.txt" 2>/dev/null | sed 's/^/      /'
    finish
fi
jetagent="$build/src/jetagent"
backends=$("$jetagent" backends 2>&1)
echo "$backends"
if echo "$backends" | grep -Eq '^tensorrt +available'; then
    record PASS "backends" "$(echo "$backends" | grep '^tensorrt')"
else
    record FAIL "backends" "tensorrt is not listed as available: $(echo "$backends" | grep '^tensorrt')"
    finish
fi

echo "== 3. models"
declare -A model_file
for m in $models; do
    if [ -n "$onnx_dir" ]; then
        f="$onnx_dir/$m.onnx"
    else
        if as_exported "$m"; then
            "$python" tools/export_torchvision.py "$m" >> "$out/export.txt" 2>&1
            status=$?
            f="models/reference/$m.onnx"
        else
            "$python" tools/export_torchvision.py --fold-batchnorm "$m" >> "$out/export.txt" 2>&1
            status=$?
            f="models/reference/$m.folded.onnx"
        fi
        [ "$status" -eq 0 ] ||
            { record FAIL "export $m" "tools/export_torchvision.py failed (see $out/export.txt)"; continue; }
    fi
    if [ -f "$f" ]; then
        model_file[$m]="$f"
        record PASS "model $m" "$f"
    else
        record FAIL "model $m" "$f is missing"
    fi
done

echo "== 4. inputs"
if [ -z "$inputs" ]; then
    inputs="$out/inputs"
    "$jetagent" capture --source synthetic://shapes --width 640 --height 480 --seed 7 \
        -n "$frames" --out "$inputs" > "$out/capture.txt" 2>&1 ||
        { record FAIL "inputs" "jetagent capture failed (see $out/capture.txt)"; finish; }
fi
if [ -z "$calibration" ]; then
    calibration="$out/calibration"
    "$jetagent" capture --source synthetic://shapes --width 640 --height 480 --seed 8 \
        -n "$frames" --out "$calibration" > "$out/capture-calibration.txt" 2>&1 ||
        { record FAIL "calibration inputs" "jetagent capture failed"; finish; }
fi
record PASS "inputs" "$inputs (calibration: $calibration)"

if [ -z "$reference" ]; then
    if echo "$backends" | grep -Eq '^xnnpack +available'; then
        reference="xnnpack:cpu:fp32"
    else
        reference="opencv:cpu:fp32"
    fi
fi
echo "== 5. compare against $reference"
cache="$out/cache"
# Runs one comparison; its JSON and output go to $out/NAME.json and NAME.txt.
compare() { # NAME MODEL CANDIDATE [compare options...]
    local name="$1" model="$2" candidate="$3"
    shift 3
    echo "-- $name: $candidate"
    "$jetagent" compare "$model" --candidate "$candidate" --reference "$reference" \
        --inputs "$inputs" --frames "$frames" --cache-dir "$cache" --json "$out/$name.json" "$@" \
        > "$out/$name.txt" 2>&1
}
# Records the outcome of the compare just run: exit 0 PASS, 1 a threshold failed, else an error.
judge() { # STATUS NAME DETAIL-PREFIX
    local status="$1" name="$2" summary=""
    if [ -f "$out/$name.json" ]; then
        summary=$(json_value "$out/$name.json" \
            '"rel err %.3g, top-1 %.2f%%, median %.2f ms" % (j["outputs"][0]["relative_error"] if j["outputs"][0]["relative_error"] is not None else float("inf"), 100 * (j["outputs"][0]["top1_agreement"] or 0), j["candidate"]["latency_ms"]["median"])')
    fi
    case "$status" in
    0) record PASS "$name" "$3$summary" ;;
    1) record FAIL "$name" "$3$summary: $(grep 'check failed' "$out/$name.txt" | head -n 1)" ;;
    *) record FAIL "$name" "exit $status: $(tail -n 1 "$out/$name.txt")" ;;
    esac
}
first=""
for m in $models; do
    f="${model_file[$m]:-}"
    [ -n "$f" ] || continue
    [ -n "$first" ] || first="$m"
    fp32_bound=1e-3
    ! as_exported "$m" || fp32_bound=1e-2
    compare "$m.fp32" "$f" tensorrt:gpu:fp32 --max-rel-error "$fp32_bound"
    judge $? "$m.fp32" "rel err <= $fp32_bound: "
    compare "$m.fp16" "$f" tensorrt:gpu:fp16 --min-top1 0.99
    status=$?
    judge "$status" "$m.fp16" "top-1 >= 99%: "
    [ "$status" -eq 1 ] && echo "      (random weights leave logits nearly tied; see --onnx)"
    compare "$m.int8" "$f" tensorrt:gpu:int8 --calibration "$calibration"
    status=$?
    if [ "$status" -eq 0 ]; then
        judge 0 "$m.int8" "reported, not judged: "
    elif grep -q 'no fast int8' "$out/$m.int8.txt"; then
        record SKIP "$m.int8" "this GPU has no fast int8 (Nano, TX2): the backend refuses it"
    else
        judge "$status" "$m.int8" ""
    fi
done

# A QDQ model (explicit quantization: TensorRT takes the model's own scales, no calibration):
# resnet18 quantized by PyTorch (tools/make_qdq_model.py), against the reference engine running
# the same model (xnnpack in fp32 applies each QuantizeLinear/DequantizeLinear exactly).
# Agreement reported, not judged.
if [ -z "$onnx_dir" ]; then
    if "$python" tools/make_qdq_model.py resnet18 >> "$out/export.txt" 2>&1; then
        compare "resnet18.qdq.int8" models/reference/resnet18.qdq.onnx tensorrt:gpu:int8
        status=$?
        if [ "$status" -eq 0 ]; then
            judge 0 "resnet18.qdq.int8" "reported, not judged: "
        elif grep -q 'no fast int8' "$out/resnet18.qdq.int8.txt"; then
            record SKIP "resnet18.qdq.int8" "this GPU has no fast int8 (Nano, TX2)"
        else
            judge "$status" "resnet18.qdq.int8" ""
        fi
    else
        record FAIL "resnet18.qdq" "tools/make_qdq_model.py failed (see $out/export.txt)"
    fi
fi

# The board's CPU in int8: the first model calibrated on xnnpack:cpu:int8 (XNNPACK's qs8/qc8
# kernels: the dot-product instructions on Orin's Cortex-A78AE, plain NEON on the Nano's A57, whose
# CPU has no fp16 arithmetic, so int8 is its only faster precision) against xnnpack:cpu:fp32, the
# two taking turns on the same frames with the same threads. A timing line: each median, their
# ratio and the top-1 agreement, reported, not judged.
if [ -n "$first" ] && echo "$backends" | grep -Eq '^xnnpack +available'; then
    echo "-- $first.cpu.int8: xnnpack:cpu:int8 against xnnpack:cpu:fp32"
    "$jetagent" compare "${model_file[$first]}" --candidate xnnpack:cpu:int8 \
        --reference xnnpack:cpu:fp32 --calibration "$calibration" --inputs "$inputs" \
        --frames "$frames" --cache-dir "$cache" --json "$out/$first.cpu.int8.json" \
        > "$out/$first.cpu.int8.txt" 2>&1
    status=$?
    if [ "$status" -eq 0 ]; then
        record PASS "$first.cpu.int8" "reported, not judged: $(json_value "$out/$first.cpu.int8.json" \
            '"int8 %.2f ms, fp32 %.2f ms median (%.2fx), top-1 %.2f%%" % (j["candidate"]["latency_ms"]["median"], j["reference"]["latency_ms"]["median"], j["reference"]["latency_ms"]["median"] / j["candidate"]["latency_ms"]["median"], 100 * (j["outputs"][0]["top1_agreement"] or 0))')"
    else
        record FAIL "$first.cpu.int8" "exit $status: $(tail -n 1 "$out/$first.cpu.int8.txt")"
    fi
elif [ -n "$first" ]; then
    record SKIP "$first.cpu.int8" "jetagent backends lists no available xnnpack (libxnnpack-dev was missing at build time)"
fi

if [ -n "$first" ]; then
    compare "$first.fp16.again" "${model_file[$first]}" tensorrt:gpu:fp16
    status=$?
    cached=$(json_value "$out/$first.fp16.again.json" 'j["candidate"]["plan_from_cache"]')
    if [ "$status" -eq 0 ] && [ "$cached" = True ]; then
        record PASS "plan cache" "$first fp16 again: plan loaded from $cache in $(json_value \
            "$out/$first.fp16.again.json" '"%.0f" % j["candidate"]["build_ms"]') ms (first: $(json_value \
            "$out/$first.fp16.json" '"%.0f" % j["candidate"]["build_ms"]') ms)"
    else
        record FAIL "plan cache" "$first fp16 again: exit $status, candidate.plan_from_cache '$cached' (want True)"
    fi

    # TensorRT itself counts the DLA cores (IRuntime::getNbDLACores); `jetagent backends` says
    # "N DLA core(s)" in the GPU's description when there are any.
    if echo "$backends" | grep '^tensorrt' | grep -q 'DLA core'; then
        compare "$first.dla0.fp16" "${model_file[$first]}" tensorrt:dla0:fp16,dla_gpu_fallback=on \
            --min-top1 0.99
        judge $? "$first.dla0.fp16" "top-1 >= 99%: "
    else
        record SKIP "dla0" "no DLA core on this board (TensorRT reports none)"
    fi
fi

echo
echo "== 6. latency (ms; the reference is $reference on the same inputs)"
python3 - "$out" "${reference%%:*}" <<'EOF'
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        j = json.load(open(path))
    except (OSError, ValueError):
        continue
    model = os.path.basename(j["model"]["path"])
    model = model[:-5] if model.endswith(".onnx") else model
    o = j["outputs"][0]
    for role in ("reference", "candidate"):
        e = j[role]
        if role == "reference" and any(r[0] == model and r[2] == "cpu" for r in rows):
            continue
        t = e["timing_mean_ms"]
        part = lambda v: "-" if v is None else "%.3f" % v
        agree = "(reference, %s)" % sys.argv[2] if role == "reference" else "%.3g / %.2f%%" % (
            o["relative_error"] if o["relative_error"] is not None else float("inf"),
            100 * (o["top1_agreement"] or 0))
        rows.append((model, e["precision"] + ("" if e["plan_from_cache"] is False else "*"),
                     e["device"], "%.3f" % e["latency_ms"]["median"], "%.3f" % e["latency_ms"]["p99"],
                     part(t["h2d"]), part(t["compute"]), part(t["d2h"]), agree))
header = ("model", "precision", "device", "median", "p99", "H2D", "compute", "D2H", "rel err / top-1")
fmt = "%-20s %-10s %-6s %9s %9s %8s %8s %8s  %s"
print(fmt % header)
for r in rows:
    print(fmt % r)
print("(* plan or prepared model loaded from the cache)")
EOF

if [ -n "$streams" ]; then
    echo
    echo "== 7. $streams stream(s): one batched engine against one engine per stream"
    if [ -z "$first" ]; then
        record FAIL "streams" "no model to run (see the model checks above)"
    else
        # N, and 1 as the baseline that the memory per added stream is taken from; the powers of
        # two between would triple the time.
        counts=1
        [ "$streams" -eq 1 ] || counts="1,$streams"
        # The first run of each mode builds its plan (minutes on a Nano) unless step 5 cached it.
        python3 tools/bench_streams.py --jetagent "$jetagent" --model "${model_file[$first]}" \
            --engine tensorrt:gpu:fp16 --streams "$counts" --cache-dir "$cache" \
            --startup-timeout 1800 2>&1 | tee "$out/streams.txt"
        status=${PIPESTATUS[0]}
        if [ "$status" -eq 0 ]; then
            record PASS "streams" "$first fp16, N = $counts; $(grep '^largest N held' "$out/streams.txt")"
        else
            record FAIL "streams" "tools/bench_streams.py exited $status (see $out/streams.txt)"
        fi
    fi
fi
finish
