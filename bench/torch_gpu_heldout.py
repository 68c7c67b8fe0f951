#!/usr/bin/python3
"""GPU step times the simulator's GPU model was not fitted to (PyTorch).

bench/torch_gpu_steps.py measured the two lab models the GPU model was
fitted to (bench/data/gpu_steps_h200.jsonl). This measures what a held-out
error needs: those two at other batches, and three models the fit never
saw, each as distlab's spec in scenarios/models/ has it:
  - cifar10_cnn: two 3x3 convolutions of 32 and two of 64, dense 512;
  - cats_dogs_cnn: 150x150 images, four convolutions up to 128 channels;
  - cifar10_resnet44: the CIFAR-10 estimator lab's ResNet-44 (v1 basic
    blocks, option A shortcuts: average pooling and zero channels).
Batches up to 4,096, float32 and mixed precision (bf16, fp16 with loss
scaling), random batches already on the GPU (no input pipeline), timed as
torch_gpu_steps.py times them (its measure()): 30 warm-up steps, then the
median of 5 blocks of `--steps` steps, with CUDA events.

Usage (a CUDA GPU and PyTorch; the lent device machine has both):
  python3 bench/torch_gpu_heldout.py > bench/data/gpu_steps_h200_heldout.jsonl
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_gpu_steps import cnn as mnist_cnn, measure, mlp as cifar10_mlp  # noqa: E402

dev = "cuda"


def cifar10_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3),
        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 6 * 6, 512), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(512, 10))


def cats_dogs_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(64, 128, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(128, 128, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(128 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, 2))


class Block(nn.Module):
    """A v1 basic block; a widening one halves the image and pads channels."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout, momentum=0.003, eps=1e-5)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout, momentum=0.003, eps=1e-5)
        self.pad = (cout - cin) // 2

    def forward(self, x):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        if self.pad:
            x = F.pad(F.avg_pool2d(x, 2), (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(y + x)


def cifar10_resnet44():
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16, momentum=0.003),
              nn.ReLU()]
    cin = 16
    for cout in (16, 32, 64):
        for i in range(7):
            layers.append(Block(cin, cout, 2 if cout != cin else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="steps per timed block")
    parser.add_argument("--budget", type=float, default=420,
                        help="seconds: the rows left when they are spent are skipped")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True  # as TensorFlow autotunes its convolutions
    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}),
          flush=True)
    sgd = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)
    sgd01 = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)
    adam = lambda p: torch.optim.Adam(p, lr=0.01)
    adam3 = lambda p: torch.optim.Adam(p, lr=0.001)
    plan = [("mnist_cnn", mnist_cnn, (1, 28, 28), 10, sgd, (256, 512, 2048, 4096)),
            ("cifar10_mlp", cifar10_mlp, (3, 32, 32), 10, adam, (256, 512, 2048, 4096)),
            ("cifar10_cnn", cifar10_cnn, (3, 32, 32), 10, sgd, (128, 512, 1024, 4096)),
            ("cats_dogs_cnn", cats_dogs_cnn, (3, 150, 150), 2, adam3, (32, 64, 128, 256)),
            ("cifar10_resnet44", cifar10_resnet44, (3, 32, 32), 10, sgd01, (128, 256, 512, 1024))]
    start = time.monotonic()
    for name, make, shape, classes, opt, batches in plan:
        for batch in batches:
            for amp in ("fp32", "bf16", "fp16"):
                if time.monotonic() - start > args.budget:
                    print(json.dumps({"skipped": name, "batch": batch, "precision": amp}),
                          flush=True)
                    continue
                measure(name, make, shape, opt, batch, amp, classes, args.steps)


if __name__ == "__main__":
    sys.exit(main())
