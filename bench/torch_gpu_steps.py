#!/usr/bin/python3
"""GPU training step times of the labs' CNN and MLP (PyTorch), fp32 and AMP.

For issue 13's GPU machine types: what a step costs on this GPU, to hold
the simulator's GPU roofline against. Needs a CUDA GPU and PyTorch (the
lent device machine has both; this machine has neither).

Usage: python3 bench/torch_gpu_steps.py > gpu_steps.jsonl Batches are random tensors already on
the GPU (no input pipeline); each figure is the median of 5 blocks of 50
steps after 30 warm-up steps, timed with CUDA events.
"""
import json
import statistics
import sys

import torch
import torch.nn as nn

dev = "cuda"


def cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(576, 64), nn.ReLU(), nn.Linear(64, 10))


def mlp():
    layers, width = [nn.Flatten()], 3072
    for units, drop in [(300, 0.3), (500, 0.1), (700, 0.1), (30, 0.1)]:
        layers += [nn.Linear(width, units), nn.ReLU(), nn.BatchNorm1d(units), nn.Dropout(drop)]
        width = units
    layers.append(nn.Linear(width, 10))
    return nn.Sequential(*layers)


def measure(name, make, shape, opt, batch, amp, classes=10, steps=50):
    """Prints and returns one row: the median of 5 blocks of `steps` steps."""
    torch.manual_seed(0)
    model = make().to(dev)
    optim = opt(model.parameters())
    x = torch.randn(batch, *shape, device=dev)
    y = torch.randint(0, classes, (batch,), device=dev)
    loss_fn = nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda", enabled=amp == "fp16")

    def step():
        optim.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16 if amp == "fp16" else torch.bfloat16,
                            enabled=amp != "fp32"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()

    for _ in range(30):
        step()
    torch.cuda.synchronize()
    blocks = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            step()
        end.record()
        torch.cuda.synchronize()
        blocks.append(start.elapsed_time(end) / steps / 1000)
    s = statistics.median(blocks)
    row = {"model": name, "batch": batch, "precision": amp, "step_s": s, "examples_per_s": batch / s,
           "spread": (max(blocks) - min(blocks)) / s}
    print(json.dumps(row), flush=True)
    del model, optim, x, y
    torch.cuda.empty_cache()
    return row


def main():
    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "cuda": torch.version.cuda}), flush=True)
    sgd = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)
    adam = lambda p: torch.optim.Adam(p, lr=0.01)
    for batch in (128, 1024):
        for amp in ("fp32", "bf16", "fp16"):
            measure("mnist_cnn", cnn, (1, 28, 28), sgd, batch, amp)
            measure("cifar10_mlp", mlp, (3, 32, 32), adam, batch, amp)


if __name__ == "__main__":
    sys.exit(main())
