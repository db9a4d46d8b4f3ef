#!/usr/bin/python3
"""Train the demo action-recognition models for synthetic://motion and export them to ONNX.

The training frames come from jetagent itself (`jetagent capture`), so the models see exactly the
generator the demo runs on, and they are preprocessed with the same OpenCV calls and settings as the
action task (stretch to 64x64 with INTER_AREA, RGB, /255, ImageNet mean/std, planar). A clip is 16
consecutive frames of one class folder: consecutive segments of the stream never share a class, so
such a run lies inside one segment. Training uses one seed of the generator (7: 24000 frames, 500
segments), with clips mirrored, their channels shuffled and their brightness inverted at random; the
reported clip accuracies are on another seed, the demo's own (1: 4800 frames, every 16-frame window of
its 100 segments). PyTorch and NumPy are seeded (0).

Two models, for the two ways an action task runs:
  clip mode       motion_clip3d.onnx: a small 3-D CNN, "clip" N x 3 x 16 x 64 x 64 (NCTHW) -> "logits" N x 6
  streaming mode  motion_backbone.onnx: a 2-D CNN per frame, "frame" N x 3 x 64 x 64 -> "embedding" N x 32,
                  and motion_head.onnx: "embeddings" N x 16 x 32 (oldest frame first) -> "logits" N x 6,
                  trained end to end and exported apart; the head judges how the embeddings change
                  over the clip, not what they are (see TemporalHead).

Needs Debian's python3-torch and python3-opencv; about 7 minutes on 2 cores (2 to capture and load the
frames, 3 for the clip model, 2.5 for the streaming model):
    /usr/bin/python3 tools/train_action_demo.py --jetagent build/src/jetagent --out models
writes models/motion_clip3d.onnx, models/motion_backbone.onnx, models/motion_head.onnx and
models/motion_labels.txt, and prints each model's clip accuracy on seed 1. With --reference DIR it also
writes, per model, a fixed input of batch 1 and PyTorch's output for it (raw little-endian float32,
MODEL.input.f32 and MODEL.output.f32) to check an inference engine against.
"""

import argparse
import concurrent.futures
import copy
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np
import torch
from torch import nn

CLASSES = ["still", "left", "right", "up", "down", "grow"]  # the order of MotionRenderer::kClassNames
SIZE = 64
CLIP = 16  # frames per clip
EMBEDDING = 32  # the backbone's output per frame
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
# Mirroring a clip left-right swaps left and right; top-bottom swaps up and down.
MIRRORED_X = [CLASSES.index(c) for c in ["still", "right", "left", "up", "down", "grow"]]
MIRRORED_Y = [CLASSES.index(c) for c in ["still", "left", "right", "down", "up", "grow"]]


def capture(jetagent, streams):
    """Captures each (seed, frames, directory) of `streams`, all at once."""
    processes = [subprocess.Popen([jetagent, "--quiet", "capture", "--source", "synthetic://motion", "--seed",
                                   str(seed), "--frames", str(frames), "--width", "320", "--height", "240",
                                   "--out", out]) for seed, frames, out in streams]
    for p in processes:
        if p.wait() != 0:
            raise subprocess.CalledProcessError(p.returncode, p.args)


def load(directory, threads):
    """Frames in sequence order, resized as the action task does (N x 64 x 64 x 3, RGB, uint8), and
    the runs of consecutive sequence numbers in one class folder, as (first, length, class)."""
    entries = sorted((int(path.stem), index, path) for index, name in enumerate(CLASSES)
                     for path in (pathlib.Path(directory) / name).glob("*.png"))
    frames = np.empty((len(entries), SIZE, SIZE, 3), dtype=np.uint8)

    def read(i):
        bgr = cv2.imread(str(entries[i][2]), cv2.IMREAD_COLOR)
        frames[i] = cv2.resize(bgr, (SIZE, SIZE), interpolation=cv2.INTER_AREA)[:, :, ::-1]

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:  # OpenCV lets go of the GIL
        list(pool.map(read, range(len(entries))))
    runs = []
    for i, (sequence, label, _) in enumerate(entries):
        if runs and runs[-1][2] == label and entries[i - 1][0] == sequence - 1:
            runs[-1][1] += 1
        else:
            runs.append([i, 1, label])
    return frames, [tuple(r) for r in runs]


def normalise(rgb):
    """... x H x W x 3 uint8 RGB to ... x 3 x H x W float32, as the action task computes it."""
    x = (rgb.astype(np.float32) / np.float32(255.0) - MEAN) / STD
    return np.moveaxis(x, -1, -3)


def windows(runs):
    """Every clip that lies inside one run, as (first frame, class)."""
    return [(first + offset, label) for first, length, label in runs for offset in range(length - CLIP + 1)]


def augment(rgb, labels, rng):
    """Variants the generator could have drawn, per sequence (B x T x H x W x 3) and at random: mirrored
    left-right and top-bottom (with their labels), channels shuffled (each channel is drawn alike), and
    brightness inverted (dark objects on light backgrounds and the reverse)."""
    rgb, labels = rgb.copy(), labels.copy()
    for b in range(len(rgb)):
        if rng.random() < 0.5:
            rgb[b] = rgb[b, :, :, ::-1]
            labels[b] = MIRRORED_X[labels[b]]
        if rng.random() < 0.5:
            rgb[b] = rgb[b, :, ::-1]
            labels[b] = MIRRORED_Y[labels[b]]
        rgb[b] = rgb[b][..., rng.permutation(3)]
        if rng.random() < 0.5:
            rgb[b] = 255 - rgb[b]
    return rgb, labels


def block3d(cin, cout, stride=1):
    return [nn.Conv3d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True)]


class Clip3dNet(nn.Module):
    """Three 3x3x3 conv blocks (the first at half resolution), two 2x2x2 max pools, global average
    pooling and one linear layer: about 71k parameters, 64M MACs per clip."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*block3d(3, 16, (1, 2, 2)), nn.MaxPool3d(2), *block3d(16, 32), nn.MaxPool3d(2),
                                      *block3d(32, 64))
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.classifier = nn.Linear(64, len(CLASSES))

    def forward(self, clip):
        return self.classifier(torch.flatten(self.pool(self.features(clip)), 1))


def block2d(cin, cout):
    return [nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class FrameBackbone(nn.Module):
    """Three strided 3x3 conv blocks down to 8x8, then a linear layer over the whole map, so the
    embedding keeps where the object is and how big: about 80k parameters."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*block2d(3, 16), *block2d(16, 32), *block2d(32, 32))
        self.embed = nn.Linear(32 * (SIZE // 8) ** 2, EMBEDDING)

    def forward(self, frame):
        return self.embed(torch.flatten(self.features(frame), 1))


class TemporalHead(nn.Module):
    """The 16 embeddings of a clip through a two-layer perceptron, about 33k parameters. Its first layer
    sees each embedding less the clip's mean embedding: how the frames change, not what they show, so
    an object's looks cannot stand in for its motion (without this, a still object that resembles
    growing ones in the training set is called "grow" however little it changes). The centring is a
    fixed linear map; folded() bakes it into the first layer's weights for export."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(CLIP * EMBEDDING, 64)
        self.classifier = nn.Linear(64, len(CLASSES))
        # On the flattened T x D clip: x[t, d] - mean over s of x[s, d].
        mean = torch.kron(torch.full((CLIP, CLIP), 1.0 / CLIP), torch.eye(EMBEDDING))
        self.register_buffer("centring", torch.eye(CLIP * EMBEDDING) - mean, persistent=False)

    def forward(self, embeddings):
        hidden = nn.functional.linear(torch.flatten(embeddings, 1), self.hidden.weight @ self.centring,
                                      self.hidden.bias)
        return self.classifier(torch.relu(hidden))

    def folded(self):
        """The same function as plain Flatten, Linear, ReLU, Linear (what the ONNX file holds)."""
        hidden = nn.Linear(CLIP * EMBEDDING, 64)
        with torch.no_grad():
            hidden.weight.copy_(self.hidden.weight @ self.centring)
            hidden.bias.copy_(self.hidden.bias)
        return nn.Sequential(nn.Flatten(), hidden, nn.ReLU(), copy.deepcopy(self.classifier)).eval()


class Streaming(nn.Module):
    """Backbone and head end to end: B x T x 3 x H x W frames to the logits of each of their T-15 clips."""

    def __init__(self):
        super().__init__()
        self.backbone = FrameBackbone()
        self.head = TemporalHead()

    def forward(self, frames):
        b, t = frames.shape[:2]
        embeddings = self.backbone(frames.reshape(b * t, *frames.shape[2:])).reshape(b, t, EMBEDDING)
        clips = embeddings.unfold(1, CLIP, 1).permute(0, 1, 3, 2)  # B x (T-15) x 16 x D
        return self.head(clips.reshape(-1, CLIP, EMBEDDING))


def train(model, steps, batches, lr):
    """Runs `steps` optimiser steps over what `batches()` yields ((input, labels) pairs), epoch after epoch."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    step, epoch = 0, 0
    while step < steps:
        epoch += 1
        total, count = 0.0, 0
        for x, y in batches():
            if step == steps:
                break
            optimiser.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            total += loss.item() * len(y)
            count += len(y)
        print(f"  epoch {epoch}: loss {total / max(count, 1):.4f} ({step}/{steps} steps)", flush=True)
    model.eval()


def clip_batches(frames, runs, per_run, batch, rng):
    """An epoch of the clip model: `per_run` random windows of every run, augmented."""
    def epoch():
        chosen = []
        for first, length, label in runs:
            if length >= CLIP:
                chosen += [(first + o, label) for o in rng.integers(0, length - CLIP + 1, per_run)]
        order = rng.permutation(len(chosen))
        for i in range(0, len(order), batch):
            picked = [chosen[j] for j in order[i:i + batch]]
            rgb = np.stack([frames[f:f + CLIP] for f, _ in picked])
            rgb, labels = augment(rgb, np.array([label for _, label in picked]), rng)
            clip = np.moveaxis(normalise(rgb), 1, 2)  # B x T x 3 x H x W -> B x 3 x T x H x W
            yield torch.from_numpy(np.ascontiguousarray(clip)), torch.from_numpy(labels)
    return epoch


def sequence_batches(frames, runs, length, batch, rng):
    """An epoch of the streaming model: one random stretch of `length` frames of every run, augmented;
    each yields the labels of its length-15 clips."""
    def epoch():
        usable = [r for r in runs if r[1] >= length]
        order = rng.permutation(len(usable))
        for i in range(0, len(order), batch):
            picked = [usable[j] for j in order[i:i + batch]]
            starts = [first + rng.integers(0, run_length - length + 1) for first, run_length, _ in picked]
            rgb = np.stack([frames[s:s + length] for s in starts])
            rgb, labels = augment(rgb, np.array([label for _, _, label in picked]), rng)
            x = torch.from_numpy(np.ascontiguousarray(normalise(rgb)))
            yield x, torch.from_numpy(np.repeat(labels, length - CLIP + 1))
    return epoch


def clip_accuracy(model, frames, runs):
    """Per class and overall, over every window of every run, one clip at a time as jetagent runs it
    (batch 64 here: the same arithmetic)."""
    clips = windows(runs)
    predicted = []
    with torch.no_grad():
        for i in range(0, len(clips), 64):
            rgb = np.stack([frames[f:f + CLIP] for f, _ in clips[i:i + 64]])
            x = torch.from_numpy(np.ascontiguousarray(np.moveaxis(normalise(rgb), 1, 2)))
            predicted.append(model(x).argmax(1))
    return report(torch.cat(predicted), [label for _, label in clips])


def streaming_accuracy(backbone, head, frames, runs):
    """As clip_accuracy, for the backbone and head: each frame's embedding once, then every window."""
    predicted, labels = [], []
    with torch.no_grad():
        for first, length, label in runs:
            if length < CLIP:
                continue
            embeddings = backbone(torch.from_numpy(normalise(frames[first:first + length])))
            clips = embeddings.unfold(0, CLIP, 1).permute(0, 2, 1)
            predicted.append(head(clips).argmax(1))
            labels += [label] * len(clips)
    return report(torch.cat(predicted), labels)


def report(predicted, labels):
    labels = torch.tensor(labels)
    per_class = {name: (predicted[labels == c] == c).float().mean().item() for c, name in enumerate(CLASSES)}
    return (predicted == labels).float().mean().item(), per_class


def export(model, example, path, input_name, output_name):
    torch.onnx.export(model, example, str(path), opset_version=13, do_constant_folding=True,
                      input_names=[input_name], output_names=[output_name],
                      dynamic_axes={input_name: {0: "batch"}, output_name: {0: "batch"}})


def write_reference(directory, name, model, example):
    directory.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        output = model(example)
    example.numpy().astype("<f4").tofile(directory / f"{name}.input.f32")
    output.numpy().astype("<f4").tofile(directory / f"{name}.output.f32")
    print(f"  {name}: input {tuple(example.shape)}, output {tuple(output.shape)} -> {directory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jetagent", required=True, help="path to the jetagent binary")
    parser.add_argument("--out", default="models", help="output directory (default: models)")
    parser.add_argument("--train-frames", type=int, default=24000, help="500 segments of 48 frames")
    parser.add_argument("--eval-frames", type=int, default=4800, help="100 segments of 48 frames")
    parser.add_argument("--train-seed", type=int, default=7, help="generator seed of the training frames")
    parser.add_argument("--eval-seed", type=int, default=1, help="generator seed of the evaluation frames (the demo's)")
    parser.add_argument("--clip-steps", type=int, default=1000, help="optimiser steps of the clip model (batch 24)")
    parser.add_argument("--streaming-steps", type=int, default=800,
                        help="optimiser steps of the streaming model (batch 12 stretches of 32 frames)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of PyTorch and of the frame loader")
    parser.add_argument("--reference", help="also write fixed inputs and PyTorch's outputs here, per model")
    args = parser.parse_args()

    started = time.monotonic()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        train_dir, eval_dir = os.path.join(tmp, "train"), os.path.join(tmp, "eval")
        capture(args.jetagent, [(args.train_seed, args.train_frames, train_dir),
                                (args.eval_seed, args.eval_frames, eval_dir)])
        train_frames, train_runs = load(train_dir, args.threads)
        eval_frames, eval_runs = load(eval_dir, args.threads)
    print(f"seed {args.train_seed}: {len(train_frames)} frames in {len(train_runs)} runs; "
          f"seed {args.eval_seed}: {len(eval_frames)} frames, {len(windows(eval_runs))} clips "
          f"({time.monotonic() - started:.0f} s)", flush=True)

    results = {}
    clip_model = Clip3dNet()
    print("clip model (3-D CNN):", flush=True)
    phase = time.monotonic()
    train(clip_model, args.clip_steps, clip_batches(train_frames, train_runs, 8, 24, rng), 4e-3)
    results["motion_clip3d"] = clip_accuracy(clip_model, eval_frames, eval_runs)
    print(f"  trained and evaluated in {time.monotonic() - phase:.0f} s", flush=True)

    streaming = Streaming()
    print("streaming model (backbone + head):", flush=True)
    phase = time.monotonic()
    train(streaming, args.streaming_steps, sequence_batches(train_frames, train_runs, 32, 12, rng), 3e-3)
    backbone, head = streaming.backbone, streaming.head.folded()
    with torch.no_grad():
        probe = torch.randn(8, CLIP, EMBEDDING)
        assert torch.allclose(head(probe), streaming.head(probe), rtol=1e-4, atol=1e-4), "folding changed the head"
    results["motion_backbone + motion_head"] = streaming_accuracy(backbone, head, eval_frames, eval_runs)
    print(f"  trained and evaluated in {time.monotonic() - phase:.0f} s", flush=True)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    export(clip_model, torch.zeros(1, 3, CLIP, SIZE, SIZE), out / "motion_clip3d.onnx", "clip", "logits")
    export(backbone, torch.zeros(1, 3, SIZE, SIZE), out / "motion_backbone.onnx", "frame", "embedding")
    export(head, torch.zeros(1, CLIP, EMBEDDING), out / "motion_head.onnx", "embeddings", "logits")
    (out / "motion_labels.txt").write_text("\n".join(CLASSES) + "\n")
    for name in ["motion_clip3d", "motion_backbone", "motion_head"]:
        print(f"wrote {out / (name + '.onnx')} ({(out / (name + '.onnx')).stat().st_size} bytes)")
    print(f"wrote {out / 'motion_labels.txt'}")

    if args.reference:
        # The first clip of the evaluation stream's second run, and its frames' embeddings.
        first = eval_runs[1][0]
        frames = torch.from_numpy(np.ascontiguousarray(normalise(eval_frames[first:first + CLIP])))
        with torch.no_grad():
            embeddings = backbone(frames).unsqueeze(0)
        directory = pathlib.Path(args.reference)
        print("reference inputs and outputs:")
        write_reference(directory, "motion_clip3d", clip_model, frames.permute(1, 0, 2, 3).unsqueeze(0).contiguous())
        write_reference(directory, "motion_backbone", backbone, frames[:1].contiguous())
        write_reference(directory, "motion_head", head, embeddings.contiguous())

    print(f"clip accuracy on seed {args.eval_seed} ({len(windows(eval_runs))} clips, every 16-frame window):")
    for name, (overall, per_class) in results.items():
        classes = ", ".join(f"{c} {a:.3f}" for c, a in per_class.items())
        print(f"  {name}: {overall:.4f} ({classes})")
    print(f"total {time.monotonic() - started:.0f} s on {args.threads} threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
