#!/usr/bin/python3
"""Export a torchvision classification architecture to ONNX, for benchmarks and reference runs.

Nothing can be downloaded here, so the weights are random (seeded). BatchNorm statistics are
randomised too: with their initial values every folded bias is zero, the exporter then shares one
zero tensor between layers, and the graph no longer looks like an export of a trained model.

Opset 10 by default: from opset 11 on, ReLU6 is exported as Clip with its bounds as inputs, which
OpenCV DNN 4.6 (Debian 12's) does not read. Pass --opset 13 for the plain modern export.

    /usr/bin/python3 tools/export_torchvision.py mobilenet_v2
writes models/reference/mobilenet_v2.onnx (about 14 MB; not committed).
Needs Debian's python3-torch and python3-torchvision.
"""

import argparse
import os
import pathlib
import sys

import torch
import torchvision


def randomise_batchnorm(model, generator):
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                shape = module.running_mean.shape
                module.running_mean.copy_(torch.empty(shape).uniform_(-0.1, 0.1, generator=generator))
                module.running_var.copy_(torch.empty(shape).uniform_(0.5, 1.5, generator=generator))
                module.weight.copy_(torch.empty(shape).uniform_(0.5, 1.5, generator=generator))
                module.bias.copy_(torch.empty(shape).uniform_(-0.1, 0.1, generator=generator))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="torchvision.models name, e.g. mobilenet_v2, resnet18, squeezenet1_1")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent / "models" / "reference"),
                        help="output directory (default: models/reference in the repository)")
    parser.add_argument("--opset", type=int, default=10)
    parser.add_argument("--size", type=int, default=224, help="input height and width (default 224)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    builder = getattr(torchvision.models, args.model, None)
    if builder is None or not callable(builder):
        print(f"export_torchvision: torchvision {torchvision.__version__} has no model '{args.model}'", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    model = builder(weights=None).eval()
    randomise_batchnorm(model, generator)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.model}.onnx"
    torch.onnx.export(model, torch.zeros(1, 3, args.size, args.size), str(path), opset_version=args.opset,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {path} ({os.path.getsize(path)} bytes, {params} parameters, opset {args.opset}, "
          f"torch {torch.__version__}, torchvision {torchvision.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
