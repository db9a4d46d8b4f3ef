#!/usr/bin/python3
"""Make a quantized (QDQ) ONNX model from a torchvision model with PyTorch's own post-training
quantization, with a reference input and the output PyTorch's quantized model computes for it, for
the QDQ test of the xnnpack backend (tests/model_zoo_test.cpp, ModelZooQdq).

    /usr/bin/python3 tools/make_qdq_model.py [MODEL ...] [--out DIR] [--seed 0]
                                             [--calibration-batches 4] [--force]

MODEL is resnet18 (the default) or mobilenet_v2. The model is torchvision's own random
initialisation after torch.manual_seed(SEED) (nothing can be downloaded here), in eval mode,
quantized with FX graph mode post-training static quantization (prepare_fx with the default
qconfig mapping of the first quantized engine this PyTorch has of onednn, x86, fbgemm and qnnpack:
onednn, Debian's x86 one, gives per-channel symmetric int8 weights and per-tensor uint8
activations from histogram observers; qnnpack, on Jetson, one weight scale per tensor), calibrated on CALIBRATION_BATCHES seeded batches of 4
N(0, 1) images, and converted (convert_fx). torch.onnx.export (opset 13) writes the quantized
model as QDQ: QuantizeLinear/DequantizeLinear around float operators, weights as int8
initializers with their scales.

Files in --out (default: models/reference/ in the repository, which git ignores), stem
<model>.qdq:
    <stem>.onnx
    <stem>.b1.input.f32   <stem>.b1.output.f32     batch 1: a seeded N(0, 1) input, and the output
                                                   of PyTorch's quantized model (its int8 kernels)
    <stem>.json           manifest: model, onnx, opset, seed, batchnorm ("folded"), quantization,
                          cases (the files and
                          their shapes), torch and torchvision versions
The .f32 files are raw little-endian float32 in row-major order; each file is written to a
temporary name and renamed, the manifest last. An export whose manifest is newer than this script
and records the same model, seed and calibration is skipped unless --force.
"""

import argparse
import json
import pathlib
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from export_torchvision import write_atomically  # noqa: E402

MODELS = ("resnet18", "mobilenet_v2")
OPSET = 13
SAMPLE_SHAPE = (3, 224, 224)
CALIBRATION_BATCH = 4
# PyTorch's quantized engines, in the order of preference: Debian's x86 torch has onednn (and
# qnnpack, not fbgemm); NVIDIA's aarch64 wheels for Jetson have qnnpack, whose default qconfig
# gives weights one scale per tensor instead of one per channel.
ENGINES = ("onednn", "x86", "fbgemm", "qnnpack")


def write_f32(path, tensor):
    data = tensor.detach().contiguous().numpy().astype("<f4", copy=False).tobytes()
    write_atomically(path, lambda p: p.write_bytes(data))


def quantization_text(args, engine):
    return (f"FX post-training static, {engine} default qconfig mapping, {args.calibration_batches} "
            f"calibration batches of {CALIBRATION_BATCH}")


def up_to_date(out, name, args, engine):
    manifest_path = out / f"{name}.qdq.json"
    try:
        if manifest_path.stat().st_mtime <= pathlib.Path(__file__).stat().st_mtime:
            return False
        manifest = json.loads(manifest_path.read_text())
        return (manifest["model"], manifest["seed"], manifest["quantization"]) == (
            name, args.seed, quantization_text(args, engine)) and (out / manifest["onnx"]).is_file()
    except (OSError, ValueError, KeyError):
        return False


def make(name, out, args, torch, torchvision):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    stem = f"{name}.qdq"
    engine = next((e for e in ENGINES if e in torch.backends.quantized.supported_engines), None)
    if engine is None:
        raise SystemExit(f"this PyTorch has none of the quantized engines {', '.join(ENGINES)}")
    if not args.force and up_to_date(out, name, args, engine):
        print(f"{stem}: up to date (--force makes it again)")
        return
    started = time.monotonic()
    (out / f"{stem}.json").unlink(missing_ok=True)
    torch.manual_seed(args.seed)
    model = getattr(torchvision.models, name)(weights=None).eval()
    generator = torch.Generator().manual_seed(args.seed)
    example = torch.zeros(1, *SAMPLE_SHAPE)
    torch.backends.quantized.engine = engine
    prepared = prepare_fx(model, get_default_qconfig_mapping(engine), (example,))
    with torch.no_grad():
        for _ in range(args.calibration_batches):
            prepared(torch.randn(CALIBRATION_BATCH, *SAMPLE_SHAPE, generator=generator))
    quantized = convert_fx(prepared)

    onnx_path = out / f"{stem}.onnx"
    warnings.filterwarnings("ignore")
    write_atomically(onnx_path, lambda p: torch.onnx.export(
        quantized, example, str(p), opset_version=OPSET, input_names=["input"],
        output_names=["logits"]))

    x = torch.randn(1, *SAMPLE_SHAPE, generator=generator)
    with torch.no_grad():
        y = quantized(x)
    case = {"batch": 1, "input": f"{stem}.b1.input.f32", "input_shape": list(x.shape),
            "output": f"{stem}.b1.output.f32", "output_shape": list(y.shape)}
    write_f32(out / case["input"], x)
    write_f32(out / case["output"], y)
    # "batchnorm": as tools/export_torchvision.py's manifests say it (PyTorch's quantization folds
    # BatchNormalization into the convolutions).
    manifest = {"model": name, "onnx": onnx_path.name, "opset": OPSET, "seed": args.seed,
                "batchnorm": "folded",
                "quantization": quantization_text(args, engine), "torch": torch.__version__,
                "torchvision": torchvision.__version__, "cases": [case]}
    text = json.dumps(manifest, indent=2) + "\n"
    write_atomically(out / f"{stem}.json", lambda p: p.write_text(text))
    print(f"{stem}: wrote {onnx_path.name} ({onnx_path.stat().st_size / 1e6:.1f} MB, opset {OPSET}), "
          f"the batch-1 reference and {stem}.json in {time.monotonic() - started:.1f} s", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"one of {', '.join(MODELS)} (default resnet18)")
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent / "models" / "reference")
    parser.add_argument("--seed", type=int, default=0, help="seeds the weights, calibration and input")
    parser.add_argument("--calibration-batches", type=int, default=4,
                        help="seeded batches of 4 random images the observers see (default 4)")
    parser.add_argument("--force", action="store_true", help="make the model even if it is up to date")
    args = parser.parse_args(argv)
    for name in args.models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r}: choose from {', '.join(MODELS)}")
    if args.calibration_batches < 1:
        parser.error("--calibration-batches must be 1 or more")
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"make_qdq_model.py needs PyTorch and torchvision (Debian: python3-torch "
              f"python3-torchvision): {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.models or ["resnet18"]:
        make(name, args.out, args, torch, torchvision)
    return 0


if __name__ == "__main__":
    sys.exit(main())
