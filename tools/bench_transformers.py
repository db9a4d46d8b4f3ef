#!/usr/bin/python3
"""The CPU backend against PyTorch eager and ONNX Runtime on the same exports, batch 1.

    /usr/bin/python3 tools/bench_transformers.py [--threads 2] [--runs 10] [--rounds 3]
        [--ort DIR] [--no-spin] [MODEL ...]

MODELs (default: swin_t vit_b_16 convnext_tiny) are exports of tools/export_torchvision.py in
models/reference/ (--set transformers). Each round times, per model and in turn:
  jetagent      `jetagent inspect MODEL --profile RUNS --threads N --json`: the xnnpack backend's
                Session::run, median of RUNS after 3 warm-up runs
  pytorch       the same torchvision model with the export's weights (same seed), eager, under
                torch.inference_mode() with torch.set_num_threads(N), on the export's batch-1 input
  onnxruntime   ONNX Runtime's CPU engine (tools/ort_time.js, npm's onnxruntime-node found under
                --ort DIR/node_modules or NODE_PATH), all graph optimisations, N intra-op threads;
                its workers spin between runs unless --no-spin (jetagent's never do)
and prints the median of the rounds' medians, the ratios taken in this run, and the context the
figures depend on (CPU, load, PyTorch's BLAS). Engines run one after another, never together.
Install ONNX Runtime for it (npm; Debian packages none):
    npm install --prefix ~/.cache/jetagent-ort --ignore-scripts --no-audit --no-fund \\
        onnxruntime-node@1.30.0
    /usr/bin/python3 tools/bench_transformers.py --ort ~/.cache/jetagent-ort
Without it the onnxruntime column is left out, and says so.
Environment: JETAGENT (default build/src/jetagent).
"""
import argparse
import pathlib
import statistics
import sys

from peer_timing import REFERENCE, Torch, context, find_ort, jetagent_binary, time_jetagent, time_ort


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=["swin_t", "vit_b_16", "convnext_tiny"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per engine, model and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ort", type=pathlib.Path, help="npm --prefix directory holding onnxruntime-node")
    parser.add_argument("--no-spin", action="store_true", help="ONNX Runtime's workers sleep between runs")
    args = parser.parse_args()
    jetagent = jetagent_binary(parser)
    models = []
    for name in args.models:
        path = REFERENCE / f"{name}.onnx"
        if not path.exists():
            parser.error(f"{path} is missing: /usr/bin/python3 tools/export_torchvision.py {name} "
                         "exports it, if it is one of the models that script knows (its --list)")
        models.append((name, path))
    node_path, ort_version = find_ort(parser, args.ort)
    print(context(args.threads, ort_version), flush=True)
    print(f"batch 1; {args.rounds} rounds of {args.runs} timed runs per engine after 3 warm-up; figures are "
          f"the median over rounds of each round's median", flush=True)
    torch = Torch(args.threads)
    figures = {name: {"jetagent": [], "pytorch": [], "onnxruntime": []} for name, _ in models}
    for round_ in range(args.rounds):
        for name, path in models:
            figures[name]["jetagent"].append(time_jetagent(jetagent, path, args.threads, args.runs))
            figures[name]["pytorch"].append(torch.time(name, args.runs))
            if ort_version:
                ms, _ = time_ort(node_path, path, args.threads, args.runs, not args.no_spin)
                figures[name]["onnxruntime"].append(ms)
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'model':<16}{'jetagent ms':>12}{'pytorch ms':>12}{'onnxrt ms':>11}{'pytorch/jetagent':>18}"
          f"{'onnxrt/jetagent':>17}")
    for name, _ in models:
        ours = statistics.median(figures[name]["jetagent"])
        eager = statistics.median(figures[name]["pytorch"])
        ort = statistics.median(figures[name]["onnxruntime"]) if figures[name]["onnxruntime"] else None
        ort_text = f"{ort:>11.1f}" if ort else f"{'-':>11}"
        ratio = f"{ort / ours:>17.2f}" if ort else f"{'-':>17}"
        print(f"{name:<16}{ours:>12.1f}{eager:>12.1f}{ort_text}{eager / ours:>18.2f}{ratio}")
    if not ort_version:
        print("onnxruntime: not found (see --help for installing onnxruntime-node with npm)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
