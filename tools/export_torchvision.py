#!/usr/bin/python3
"""Export torchvision models to ONNX with PyTorch's reference inputs and outputs, for the model-zoo tests.

    /usr/bin/python3 tools/export_torchvision.py [MODEL ...] [--out DIR] [--opset 13] [--seed 0]
                                                 [--keep-batchnorm] [--force]

With no MODEL, exports the ten models the model-zoo tests (tests/model_zoo_test.cpp) check:
mobilenet_v2 resnet18 resnet50 squeezenet1_1 alexnet vgg16 densenet121 shufflenet_v2_x1_0
resnext50_32x4d (inputs N x 3 x 224 x 224) and the video model r3d_18 (N x 3 x 16 x 112 x 112).

The export is the plain one users make: torch.onnx.export at opset 13 with its default training
mode (EVAL, which folds BatchNormalization into the convolutions and leaves the exporter's
Identity nodes for shared initializers), input "input", output "logits", the batch dimension
dynamic on both. Nothing can be downloaded here, so the weights are torchvision's own random
initialisation after torch.manual_seed(SEED), untouched.

--keep-batchnorm exports the eval-mode model with training=TrainingMode.PRESERVE instead, which
keeps the BatchNormalization nodes (and so the architecture's exact trainable-parameter count in
the graph); those files are named <model>.bn.*.

For each model (stem = <model> or <model>.bn), in --out (default: models/reference/ in the
repository, which git ignores; vgg16 alone is over 500 MB):
    <stem>.onnx
    <stem>.b1.input.f32   <stem>.b1.output.f32     batch 1: seeded N(0, 1) input, PyTorch's output
    <stem>.b8.input.f32   <stem>.b8.output.f32     batch 8: the same
    <stem>.json           manifest: model, files, shapes, opset, parameter count, versions, seed
The .f32 files are raw little-endian float32 in row-major order. Every file is written to a
temporary name and renamed, the manifest last, so a manifest always describes a finished export.

A model whose manifest is newer than this script and matches the requested opset, seed and mode
(with its files present at the right sizes) is skipped unless --force: CI runs this on every test
run, and the second run takes seconds. All ten take a minute or two on two cores.

Exit status: 0 success; 1 an export failed, or torch is missing; 2 usage error (unknown model).
Needs Debian's python3-torch and python3-torchvision (torch 1.13, torchvision 0.14).
"""

import argparse
import json
import os
import pathlib
import sys
import time
import warnings

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
IMAGE_SHAPE = (3, 224, 224)
VIDEO_SHAPE = (3, 16, 112, 112)  # channels, frames, height, width: torchvision's video models
# Name -> (torchvision module holding the builder, one sample's input shape), in default order.
MODELS = {
    "mobilenet_v2": ("models", IMAGE_SHAPE),
    "resnet18": ("models", IMAGE_SHAPE),
    "resnet50": ("models", IMAGE_SHAPE),
    "squeezenet1_1": ("models", IMAGE_SHAPE),
    "alexnet": ("models", IMAGE_SHAPE),
    "vgg16": ("models", IMAGE_SHAPE),
    "densenet121": ("models", IMAGE_SHAPE),
    "shufflenet_v2_x1_0": ("models", IMAGE_SHAPE),
    "resnext50_32x4d": ("models", IMAGE_SHAPE),
    "r3d_18": ("models.video", VIDEO_SHAPE),
}
BATCHES = (1, 8)


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def megabytes(size):
    return f"{size / 1e6:.1f} MB"


def write_atomically(path, write):
    """Calls write(temporary_path), then renames the temporary file to path."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def remove_stale_temporaries(out, stem):
    """Removes temporary files of `stem` left by exports that were killed (their process is gone)."""
    for path in out.glob(f".{stem}.*.tmp"):
        try:
            os.kill(int(path.suffixes[-2].lstrip(".")), 0)
        except ProcessLookupError:
            path.unlink(missing_ok=True)
        except (ValueError, IndexError, PermissionError):
            pass


def write_f32(path, tensor):
    data = tensor.detach().contiguous().numpy().astype("<f4", copy=False).tobytes()
    write_atomically(path, lambda p: p.write_bytes(data))
    return len(data)


def element_count(shape):
    count = 1
    for d in shape:
        count *= d
    return count


def cached(out, stem, args):
    """The manifest if the export in `out` is finished, current and made with these settings."""
    manifest_path = out / f"{stem}.json"
    try:
        if manifest_path.stat().st_mtime <= pathlib.Path(__file__).stat().st_mtime:
            return None
        manifest = json.loads(manifest_path.read_text())
        if (manifest.get("opset"), manifest.get("seed"), manifest.get("keep_batchnorm")) != (
                args.opset, args.seed, args.keep_batchnorm):
            return None
        if not (out / manifest["onnx"]).is_file():
            return None
        for case in manifest["cases"]:
            for kind in ("input", "output"):
                expected = 4 * element_count(case[f"{kind}_shape"])
                if (out / case[kind]).stat().st_size != expected:
                    return None
        return manifest
    except (OSError, ValueError, KeyError, TypeError):
        return None


def export(name, out, args, torch, torchvision):
    module_name, sample_shape = MODELS[name]
    stem = f"{name}.bn" if args.keep_batchnorm else name
    started = time.monotonic()
    manifest_path = out / f"{stem}.json"
    if not args.force and cached(out, stem, args):
        print(f"{stem}: up to date ({manifest_path.name} is newer than the script; --force re-exports)")
        return
    # A manifest left from an earlier export would describe a mixture of old and new files if this
    # export stopped halfway.
    manifest_path.unlink(missing_ok=True)
    remove_stale_temporaries(out, stem)

    module = torchvision
    for part in module_name.split("."):
        module = getattr(module, part)
    torch.manual_seed(args.seed)
    model = getattr(module, name)(weights=None).eval()
    parameters = sum(p.numel() for p in model.parameters())

    onnx_path = out / f"{stem}.onnx"
    training = torch.onnx.TrainingMode.PRESERVE if args.keep_batchnorm else torch.onnx.TrainingMode.EVAL
    # PRESERVE warns that constant folding may alter trainable parameters; that concerns models in
    # training mode, and this one is in eval mode, exported as it is.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
    write_atomically(onnx_path, lambda p: torch.onnx.export(
        model, torch.zeros(1, *sample_shape), str(p), opset_version=args.opset, training=training,
        input_names=["input"], output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}))

    generator = torch.Generator().manual_seed(args.seed)
    cases = []
    reference_bytes = 0
    for batch in BATCHES:
        x = torch.randn(batch, *sample_shape, generator=generator)
        with torch.no_grad():
            y = model(x)
        case = {"batch": batch,
                "input": f"{stem}.b{batch}.input.f32", "input_shape": list(x.shape),
                "output": f"{stem}.b{batch}.output.f32", "output_shape": list(y.shape)}
        reference_bytes += write_f32(out / case["input"], x)
        reference_bytes += write_f32(out / case["output"], y)
        cases.append(case)

    manifest = {"model": name, "onnx": onnx_path.name, "opset": args.opset,
                "keep_batchnorm": args.keep_batchnorm, "parameters": parameters,
                "torch": torch.__version__, "torchvision": torchvision.__version__,
                "seed": args.seed, "cases": cases}
    text = json.dumps(manifest, indent=2) + "\n"
    write_atomically(manifest_path, lambda p: p.write_text(text))
    print(f"{stem}: wrote {onnx_path.name} ({megabytes(onnx_path.stat().st_size)}, opset {args.opset}"
          f"{', BatchNormalization kept' if args.keep_batchnorm else ''}), references for batch "
          f"{' and '.join(str(b) for b in BATCHES)} ({megabytes(reference_bytes)}), {manifest_path.name}; "
          f"{parameters:,} parameters; {time.monotonic() - started:.1f} s", flush=True)


def main():
    parser = argparse.ArgumentParser(prog="export_torchvision.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help="models to export (default: all ten): " + " ".join(MODELS))
    parser.add_argument("--out", type=pathlib.Path, default=REPOSITORY / "models" / "reference",
                        help="output directory (default: models/reference in the repository)")
    parser.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the weights and the reference inputs (default 0)")
    parser.add_argument("--keep-batchnorm", action="store_true",
                        help="keep BatchNormalization nodes (TrainingMode.PRESERVE); files <model>.bn.*")
    parser.add_argument("--force", action="store_true", help="export even when an up-to-date export exists")
    args = parser.parse_args()

    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        print(f"export_torchvision: unknown model {', '.join(repr(m) for m in unknown)}; "
              f"known: {' '.join(MODELS)}", file=sys.stderr)
        return 2
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"export_torchvision: cannot import PyTorch ({e}); install it with "
              f"`apt install python3-torch python3-torchvision`", file=sys.stderr)
        return 1
    # Debian's torch starts with one thread whatever the machine has.
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(usable_cpus())

    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.models or list(MODELS):
        try:
            export(name, args.out, args, torch, torchvision)
        except Exception as e:  # report every model that failed, then exit 1
            print(f"export_torchvision: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    if failed:
        print(f"export_torchvision: failed: {' '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
