#!/usr/bin/python3
"""Train the demo classifier for synthetic://shapes and export it to ONNX.

The training frames come from jetagent itself (`jetagent capture`), so the model sees exactly the
generator the demo runs on, and they are preprocessed with the same OpenCV calls and settings as
firmware-config/demo.yaml (stretch to 64x64 with INTER_AREA, RGB, /255, ImageNet mean/std). Training
uses one seed of the generator; the reported accuracy is on another, the demo's own (seed 1).

Needs Debian's python3-torch and python3-opencv:
    tools/train_shapes_demo.py --jetagent build/src/jetagent --out models
writes models/shapes_cnn.onnx and models/shapes_labels.txt.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

import cv2
import numpy as np
import torch
from torch import nn

CLASSES = ["circle", "square", "triangle", "cross", "star", "ring"]  # the order of ShapesRenderer::kClassNames
SIZE = 64
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def capture(jetagent, seed, frames, out):
    subprocess.run([jetagent, "--quiet", "capture", "--source", "synthetic://shapes", "--seed", str(seed),
                    "--frames", str(frames), "--width", "320", "--height", "240", "--out", out], check=True)


def load(directory):
    """Frames as N x 3 x 64 x 64 float32 and their class indices, preprocessed as demo.yaml says."""
    images, labels = [], []
    for index, name in enumerate(CLASSES):
        folder = pathlib.Path(directory) / name
        for path in sorted(folder.glob("*.png")):
            bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
            small = cv2.resize(bgr, (SIZE, SIZE), interpolation=cv2.INTER_AREA)
            rgb = small[:, :, ::-1].astype(np.float32)
            images.append(((rgb / np.float32(255.0) - MEAN) / STD).transpose(2, 0, 1))
            labels.append(index)
    return torch.from_numpy(np.stack(images)), torch.tensor(labels)


def block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class ShapesNet(nn.Module):
    """Four 3x3 conv blocks, global average pooling and one linear layer: about 61k parameters."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*block(3, 16), nn.MaxPool2d(2), *block(16, 32), nn.MaxPool2d(2),
                                      *block(32, 64), nn.MaxPool2d(2), *block(64, 64))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(64, len(CLASSES))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        predicted = torch.cat([model(images[i:i + 256]).argmax(1) for i in range(0, len(images), 256)])
    return (predicted == labels).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jetagent", required=True, help="path to the jetagent binary")
    parser.add_argument("--out", default="models", help="output directory (default: models)")
    parser.add_argument("--train-frames", type=int, default=6000)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--train-seed", type=int, default=1000, help="generator seed of the training frames")
    parser.add_argument("--eval-seed", type=int, default=1, help="generator seed of the evaluation frames (the demo's)")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as tmp:
        capture(args.jetagent, args.train_seed, args.train_frames, os.path.join(tmp, "train"))
        capture(args.jetagent, args.eval_seed, 1000, os.path.join(tmp, "eval"))
        train_x, train_y = load(os.path.join(tmp, "train"))
        eval_x, eval_y = load(os.path.join(tmp, "eval"))

    model = ShapesNet()
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=args.epochs * ((len(train_x) + 63) // 64))
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(train_x))
        total = 0.0
        for i in range(0, len(order), 64):
            batch = order[i:i + 64]
            optimiser.zero_grad()
            loss = loss_fn(model(train_x[batch]), train_y[batch])
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(batch)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(train_x):.4f}, "
              f"accuracy on seed {args.eval_seed}: {accuracy(model, eval_x, eval_y):.4f}", flush=True)

    model.eval()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, torch.zeros(1, 3, SIZE, SIZE), str(out / "shapes_cnn.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    (out / "shapes_labels.txt").write_text("\n".join(CLASSES) + "\n")
    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {out / 'shapes_cnn.onnx'} ({params} parameters) and {out / 'shapes_labels.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
