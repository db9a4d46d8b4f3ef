#!/usr/bin/python3
"""Export torchvision models to ONNX with PyTorch's reference inputs and outputs, for the model-zoo
tests and the studies of `jetagent sweep`.

    /usr/bin/python3 tools/export_torchvision.py [MODEL ...] [--set NAME ...] [--fold-batchnorm]
                                                 [--head N] [--out DIR] [--opset 13] [--seed 0]
                                                 [--force] [--list]

The models are the union of the sets named with --set and the MODELs named, in that order; with
neither, the set zoo. The sets (--list prints them with each model's input shape):
  zoo     the ten the model-zoo tests (tests/model_zoo_test.cpp) check: mobilenet_v2 resnet18
          resnet50 squeezenet1_1 alexnet vgg16 densenet121 shufflenet_v2_x1_0 resnext50_32x4d
          and the video model r3d_18; what tools/dev.sh exports for the tests
  papers  the eight classic CNNs of the papers' pre/post-optimisation table: alexnet vgg16 vgg19
          resnet18 resnet50 resnet101 resnet152 densenet121 (r3d_18, the table's video model, is
          named beside it: --set papers r3d_18)
  modern  the modern CNN backbones the papers set beside the transformers: efficientnet_b0
          efficientnet_v2_s regnet_y_800mf mobilenet_v3_large
  transformers  vision transformers and ConvNeXt: vit_b_16 (also DeiT-B/16's network) swin_t
          convnext_tiny maxvit_t. PyTorch's reference outputs take minutes here (Debian's torch
          runs nn.Linear on the reference BLAS); vit_b_16.onnx is 330 MB
  video   torchvision's video CNNs: r3d_18 mc3_18 r2plus1d_18 s3d (MViT, its video transformer,
          exports its class-token split as ONNX sequence operators, which jetagent does not run)
  all     every model here: the sets and the other models the papers measured,
          wide_resnet50_2 googlenet mnasnet1_0
Image models take N x 3 x 224 x 224, efficientnet_v2_s N x 3 x 384 x 384 (the size its published
figures are for), r3d_18, mc3_18 and r2plus1d_18 N x 3 x 16 x 112 x 112, s3d N x 3 x 16 x 224 x 224. googlenet is built without its auxiliary
classifiers (aux_logits=False), as torchvision's published weights are. swin_t and maxvit_t are
exported without the exporter's constant folding (see MODELS).

The export is torch.onnx.export at opset 13, input "input", output "logits", the batch dimension
dynamic on both. By default it keeps the BatchNormalization nodes (training=TrainingMode.PRESERVE
on the eval-mode model), so the graph holds the architecture's exact trainable-parameter count.
--fold-batchnorm makes the plain export users make instead: torch.onnx.export's default training
mode (EVAL), which folds BatchNormalization into the convolutions before it and leaves the
exporter's Identity nodes for shared initializers. For a model without BatchNormalization
(squeezenet1_1, alexnet, vgg16, vgg19) the two are the same graph under different names.
Nothing can be downloaded here, so the weights are torchvision's own random initialisation after
torch.manual_seed(SEED), untouched but for one thing: an nn.Linear initialised to zero (vit_b_16's
classifier, which torchvision zeroes for fine-tuning) gets seeded N(0, 0.02) weights, or every
output would be 0 whatever the input.

--head N replaces the model's last nn.Linear layer (the classifier's output layer: fc,
classifier[-1], ...) with one of N outputs, as the Nano paper's binary heads (N = 2) are; the rest
of the weights are those of the export without --head, and the new layer is nn.Linear's own
initialisation after torch.manual_seed(SEED). A model whose classifier does not end in nn.Linear
(squeezenet1_1's ends in a 1x1 convolution) is an error.

Files, for each model, with stem <model>[.head<N>][.folded] (so mobilenet_v2, mobilenet_v2.folded,
resnet18.head2), in --out (default: models/reference/ in the repository, which git ignores; vgg16
and vgg19 are over 500 MB each):
    <stem>.onnx
    <stem>.b1.input.f32   <stem>.b1.output.f32     batch 1: seeded N(0, 1) input, PyTorch's output
    <stem>.b8.input.f32   <stem>.b8.output.f32     batch 8: the same
    <stem>.json           manifest: model, files, shapes, opset, batchnorm ("kept" or "folded"),
                          head (N or null) and head_layer (the layer replaced), parameter count
                          (PyTorch's), versions, seed
The .f32 files are raw little-endian float32 in row-major order. Every file is written to a
temporary name and renamed, the manifest last, so a manifest always describes a finished export.

A model whose manifest is newer than this script and records the requested model, opset, seed,
batchnorm mode and head (with its files present at the right sizes) is skipped unless --force:
CI runs this on every test run, and the second run takes seconds. A manifest of an earlier version
of this script, whose <model>.json was the folded export, records no batchnorm mode and is
exported again. The zoo's ten take a minute or two on two cores.

Exit status: 0 success; 1 an export failed (a model without nn.Linear under --head included), or
torch is missing; 2 usage error (unknown model or set, bad --head).
Needs Debian's python3-torch and python3-torchvision (torch 1.13, torchvision 0.14).
"""

import argparse
import collections
import json
import os
import pathlib
import sys
import time
import warnings

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
IMAGE_SHAPE = (3, 224, 224)
VIDEO_SHAPE = (3, 16, 112, 112)  # channels, frames, height, width: torchvision's video models
# module: the torchvision module holding the builder; shape: one sample's input; options: the
# builder's keyword arguments besides weights=None; fold: the exporter's constant folding
# (do_constant_folding), on unless the model's parameter count needs it off.
Model = collections.namedtuple("Model", "module shape options fold", defaults=(True,))
# Every model, the zoo's ten first in the order the tests list them.
MODELS = {
    "mobilenet_v2": Model("models", IMAGE_SHAPE, {}),
    "resnet18": Model("models", IMAGE_SHAPE, {}),
    "resnet50": Model("models", IMAGE_SHAPE, {}),
    "squeezenet1_1": Model("models", IMAGE_SHAPE, {}),
    "alexnet": Model("models", IMAGE_SHAPE, {}),
    "vgg16": Model("models", IMAGE_SHAPE, {}),
    "densenet121": Model("models", IMAGE_SHAPE, {}),
    "shufflenet_v2_x1_0": Model("models", IMAGE_SHAPE, {}),
    "resnext50_32x4d": Model("models", IMAGE_SHAPE, {}),
    "r3d_18": Model("models.video", VIDEO_SHAPE, {}),
    # The other video CNNs, for the CPU engine's benchmark against its peers: mixed 3D/2D
    # convolutions, (2+1)D factorised ones, and S3D's separable ones at the 224 x 224 crop its
    # weights are evaluated at (16 frames here; its published figures use clips of 128).
    "mc3_18": Model("models.video", VIDEO_SHAPE, {}),
    "r2plus1d_18": Model("models.video", VIDEO_SHAPE, {}),
    "s3d": Model("models.video", (3, 16, 224, 224), {}),
    "vgg19": Model("models", IMAGE_SHAPE, {}),
    "resnet101": Model("models", IMAGE_SHAPE, {}),
    "resnet152": Model("models", IMAGE_SHAPE, {}),
    "wide_resnet50_2": Model("models", IMAGE_SHAPE, {}),
    "efficientnet_b0": Model("models", IMAGE_SHAPE, {}),
    # Without the auxiliary classifiers, which eval mode never runs: the parameter count is then
    # the published 6,624,904. init_weights=True is the default, named to silence its warning.
    "googlenet": Model("models", IMAGE_SHAPE, {"aux_logits": False, "init_weights": True}),
    "mnasnet1_0": Model("models", IMAGE_SHAPE, {}),
    # Modern backbones: the CNNs the papers put beside the transformers.
    "mobilenet_v3_large": Model("models", IMAGE_SHAPE, {}),
    # At 384 x 384, the size its weights are evaluated at, where torchvision's 8.37 GFLOPS holds.
    "efficientnet_v2_s": Model("models", (3, 384, 384), {}),
    "regnet_y_800mf": Model("models", IMAGE_SHAPE, {}),
    # Transformers and ConvNeXt. vit_b_16 is also the DeiT-B/16 architecture (DeiT changed the
    # training, not the network; without its distillation token).
    "vit_b_16": Model("models", IMAGE_SHAPE, {}),
    "convnext_tiny": Model("models", IMAGE_SHAPE, {}),
    # Without constant folding: the exporter would fold each block's relative-position bias (a
    # 169-row table of parameters gathered by a fixed index) into the 49 x 49 bias it makes, 14
    # times the table's size, and the graph would count 1.1% more parameters than the model has.
    # jetagent's own fold-constants makes the same tensors when it prepares the model.
    "swin_t": Model("models", IMAGE_SHAPE, {}, fold=False),
    "maxvit_t": Model("models", IMAGE_SHAPE, {}, fold=False),
}
SETS = {
    "zoo": ["mobilenet_v2", "resnet18", "resnet50", "squeezenet1_1", "alexnet", "vgg16", "densenet121",
            "shufflenet_v2_x1_0", "resnext50_32x4d", "r3d_18"],
    "papers": ["alexnet", "vgg16", "vgg19", "resnet18", "resnet50", "resnet101", "resnet152",
               "densenet121"],
    "modern": ["efficientnet_b0", "efficientnet_v2_s", "regnet_y_800mf", "mobilenet_v3_large"],
    "transformers": ["vit_b_16", "swin_t", "convnext_tiny", "maxvit_t"],
    "video": ["r3d_18", "mc3_18", "r2plus1d_18", "s3d"],
    "all": list(MODELS),
}
DEFAULT_SET = "zoo"
BATCHES = (1, 8)


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def megabytes(size):
    return f"{size / 1e6:.1f} MB"


def shape_text(shape):
    return "x".join(str(d) for d in shape)


def stem_of(name, args):
    """The files' common name: <model>[.head<N>][.folded]."""
    return name + (f".head{args.head}" if args.head else "") + (".folded" if args.fold_batchnorm else "")


def batchnorm_mode(args):
    return "folded" if args.fold_batchnorm else "kept"


def selected_models(args):
    """The models of the named sets, then the named models, each once, in that order."""
    names = []
    for set_name in args.set or ([] if args.models else [DEFAULT_SET]):
        names += SETS[set_name]
    names += args.models
    return list(dict.fromkeys(names))


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


def cached(out, name, args):
    """The manifest if the export in `out` is finished, current and made with these settings."""
    stem = stem_of(name, args)
    manifest_path = out / f"{stem}.json"
    try:
        if manifest_path.stat().st_mtime <= pathlib.Path(__file__).stat().st_mtime:
            return None
        manifest = json.loads(manifest_path.read_text())
        # An earlier version of this script wrote the folded export as <model>.json with no
        # "batchnorm" key: never the export asked for now, whatever its mode.
        recorded = tuple(manifest.get(key) for key in ("model", "onnx", "opset", "seed", "batchnorm", "head"))
        if recorded != (name, f"{stem}.onnx", args.opset, args.seed, batchnorm_mode(args), args.head):
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


def replace_head(model, name, classes, seed, torch):
    """Replaces the last nn.Linear of `model` with one of `classes` outputs, initialised by
    nn.Linear itself after torch.manual_seed(seed); returns the replaced layer's name.
    Raises ValueError when the model has no nn.Linear."""
    last = None
    for qualified, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            last = (qualified, module)
    if last is None:
        raise ValueError(f"--head {classes}: {name} has no nn.Linear layer to replace (--head replaces "
                         f"the last nn.Linear of a classifier, fc or classifier[-1]; squeezenet's "
                         f"classifier ends in a 1x1 convolution instead): leave --head out for it")
    qualified, old = last
    parent_name, _, child = qualified.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    torch.manual_seed(seed)
    setattr(parent, child, torch.nn.Linear(old.in_features, classes, bias=old.bias is not None))
    return qualified


def build(name, args, torch, torchvision):
    """The eval-mode model, seeded, with its head replaced under --head; and the replaced layer."""
    spec = MODELS[name]
    module = torchvision
    for part in spec.module.split("."):
        module = getattr(module, part)
    torch.manual_seed(args.seed)
    model = getattr(module, name)(weights=None, **spec.options)
    # torchvision starts ViT's classifier at zero (fine-tuning's choice): every output would be 0
    # whatever the input, and no comparison with it could fail. Such a layer gets seeded N(0, 0.02)
    # weights instead, as ViT's other layers have.
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, torch.nn.Linear) and not layer.weight.any():
                torch.nn.init.normal_(layer.weight, std=0.02)
    head_layer = replace_head(model, name, args.head, args.seed, torch) if args.head else None
    model.eval()
    if args.head:
        with torch.no_grad():
            classes = model(torch.zeros(1, *spec.shape)).shape[-1]
        if classes != args.head:
            raise ValueError(f"--head {args.head}: {name}'s last nn.Linear ({head_layer}) is not its output "
                             f"layer (the output has {classes} values after replacing it)")
    return model, head_layer


def export(name, out, args, torch, torchvision):
    sample_shape = MODELS[name].shape
    stem = stem_of(name, args)
    started = time.monotonic()
    manifest_path = out / f"{stem}.json"
    if not args.force and cached(out, name, args):
        print(f"{stem}: up to date ({manifest_path.name} is newer than the script; --force re-exports)")
        return
    # A manifest left from an earlier export would describe a mixture of old and new files if this
    # export stopped halfway.
    manifest_path.unlink(missing_ok=True)
    remove_stale_temporaries(out, stem)
    # The large models take minutes (PyTorch computes their references on the reference BLAS).
    print(f"{stem}: exporting ...", flush=True)

    model, head_layer = build(name, args, torch, torchvision)
    parameters = sum(p.numel() for p in model.parameters())

    onnx_path = out / f"{stem}.onnx"
    training = torch.onnx.TrainingMode.EVAL if args.fold_batchnorm else torch.onnx.TrainingMode.PRESERVE
    # PRESERVE warns that constant folding may alter trainable parameters; that concerns models in
    # training mode, and this one is in eval mode, exported as it is.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
    write_atomically(onnx_path, lambda p: torch.onnx.export(
        model, torch.zeros(1, *sample_shape), str(p), opset_version=args.opset, training=training,
        input_names=["input"], output_names=["logits"], do_constant_folding=MODELS[name].fold,
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
                "batchnorm": batchnorm_mode(args), "head": args.head, "head_layer": head_layer,
                "parameters": parameters, "torch": torch.__version__,
                "torchvision": torchvision.__version__, "seed": args.seed, "cases": cases}
    text = json.dumps(manifest, indent=2) + "\n"
    write_atomically(manifest_path, lambda p: p.write_text(text))
    head_text = f", head {head_layer} with {args.head} outputs" if args.head else ""
    print(f"{stem}: wrote {onnx_path.name} ({megabytes(onnx_path.stat().st_size)}, opset {args.opset}, "
          f"BatchNormalization {batchnorm_mode(args)}{head_text}), references for batch "
          f"{' and '.join(str(b) for b in BATCHES)} ({megabytes(reference_bytes)}), {manifest_path.name}; "
          f"{parameters:,} parameters; {time.monotonic() - started:.1f} s", flush=True)


def print_list():
    print(f"{'model':<20} {'input (one sample)':<20} sets")
    for name, spec in MODELS.items():
        sets = [s for s, members in SETS.items() if name in members]
        print(f"{name:<20} {shape_text(spec.shape):<20} {' '.join(sets)}")
    print()
    for set_name, members in SETS.items():
        default = " (the default)" if set_name == DEFAULT_SET else ""
        print(f"--set {set_name}{default}: {' '.join(members)}")


def note_old_style_exports(out):
    """Says so when `out` holds the .bn exports of this script's earlier versions, which no one reads now."""
    old = sorted(p.name[:-len(".bn.json")] for p in out.glob("*.bn.json"))
    if old:
        print(f"export_torchvision: note: {out} holds exports of the former --keep-batchnorm "
              f"({', '.join(f'{m}.bn.*' for m in old)}); BatchNorm is kept by default now, in <model>.*, "
              f"and nothing reads the .bn files: they can be removed", file=sys.stderr)


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(prog="export_torchvision.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help="models to export (default: the set zoo): " + " ".join(MODELS))
    parser.add_argument("--set", action="append", choices=list(SETS), metavar="NAME",
                        help="export a set of models: " + ", ".join(SETS) + " (repeatable; --list shows them)")
    parser.add_argument("--list", action="store_true", help="print the models and sets, export nothing")
    parser.add_argument("--fold-batchnorm", action="store_true",
                        help="fold BatchNormalization into the convolutions (TrainingMode.EVAL, "
                             "torch.onnx.export's default); files <model>.folded.*")
    parser.add_argument("--keep-batchnorm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--head", type=int, metavar="N",
                        help="replace the classifier's last nn.Linear with one of N outputs, seeded; "
                             "files <model>.head<N>.*")
    parser.add_argument("--out", type=pathlib.Path, default=REPOSITORY / "models" / "reference",
                        help="output directory (default: models/reference in the repository)")
    parser.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the weights and the reference inputs (default 0)")
    parser.add_argument("--force", action="store_true", help="export even when an up-to-date export exists")
    args = parser.parse_args(argv)
    # Removed rather than kept as a no-op: its files were <model>.bn.*, and a script that asks for
    # it expects those names, which no export writes any more.
    if args.keep_batchnorm:
        parser.error("--keep-batchnorm is gone: BatchNormalization is kept by default now, in "
                     "<model>.* (formerly <model>.bn.*); --fold-batchnorm folds it, in <model>.folded.*")
    if args.head is not None and args.head < 1:
        parser.error(f"--head {args.head}: the new layer needs at least 1 output")
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model {', '.join(repr(m) for m in unknown)}; known: {' '.join(MODELS)} "
                     f"(--list shows them with their sets)")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    if args.list:
        print_list()
        return 0
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
    note_old_style_exports(args.out)
    failed = []
    for name in selected_models(args):
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
