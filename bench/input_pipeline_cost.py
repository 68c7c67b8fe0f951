#!/usr/bin/python3
"""What an image input pipeline costs per example on one core of this CPU.

The cats-vs-dogs lab's pipeline decodes each JPEG, resizes it to the
model's 150 x 150 and augments it (Keras' ImageDataGenerator: rotation,
shifts, shear, zoom, horizontal flip) before a step can use it; its
preprocessed records hold images already resized and augmented, so that a
step's input only has to be read and cast to floats. This script times each
stage with Pillow (which decodes with libjpeg-turbo, as TensorFlow does) on
one core, medians of several rounds, and prints the scenario section that
`./simulate` takes (the README's "Input pipelines").

The photos are synthetic but photo-like (smooth gradients and shapes with
mild noise: about the bytes per pixel of a camera JPEG at quality 90), of the
size given (default 500 x 375, the usual size of the set's photos).

  /usr/bin/python3 bench/input_pipeline_cost.py [--images 200] [--rounds 5]
"""

import argparse
import io
import os
import random
import statistics
import time

import numpy
from PIL import Image, ImageDraw, ImageFilter


def photo_like(width, height, seed):
    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(width), rng.randrange(height)
        r = rng.randrange(20, max(21, width // 3))
        colour = tuple(rng.randrange(256) for _ in range(3))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
    image = image.filter(ImageFilter.GaussianBlur(2))
    noise = Image.effect_noise((width, height), 12).convert("RGB")
    return Image.blend(image, noise, 0.15)


def jpeg_bytes(image):
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90)
    return out.getvalue()


def augment(image, rng, size):
    # ImageDataGenerator(rotation_range=40, width_shift_range=0.2,
    # height_shift_range=0.2, shear_range=0.2, zoom_range=0.2,
    # horizontal_flip=True): one affine warp and a flip.
    angle = rng.uniform(-40, 40)
    image = image.rotate(angle, resample=Image.BILINEAR,
                         translate=(rng.uniform(-0.2, 0.2) * size, rng.uniform(-0.2, 0.2) * size))
    zoom = rng.uniform(0.8, 1.2)
    shear = rng.uniform(-0.2, 0.2)
    image = image.transform((size, size), Image.AFFINE, (zoom, shear, 0, 0, zoom, 0),
                            resample=Image.BILINEAR)
    if rng.random() < 0.5:
        image = image.transpose(Image.FLIP_LEFT_RIGHT)
    return image


def time_stage(fn, items, rounds):
    per_round = []
    for _ in range(rounds):
        start = time.perf_counter()
        out = [fn(x) for x in items]
        per_round.append((time.perf_counter() - start) / len(items) * 1e6)
    return statistics.median(per_round), out


def cpu_ghz():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000
    return 0.0


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--width", type=int, default=500)
    parser.add_argument("--height", type=int, default=375)
    parser.add_argument("--size", type=int, default=150, help="the model's input side")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core

    files = [jpeg_bytes(photo_like(args.width, args.height, i)) for i in range(args.images)]
    rng = random.Random(0)
    decode_us, decoded = time_stage(lambda b: Image.open(io.BytesIO(b)).convert("RGB"), files,
                                    args.rounds)
    resize_us, resized = time_stage(
        lambda im: im.resize((args.size, args.size), Image.BILINEAR), decoded, args.rounds)
    augment_us, augmented = time_stage(lambda im: augment(im, rng, args.size), resized,
                                       args.rounds)
    raw = [im.tobytes() for im in augmented]
    # A preprocessed record: the resized, augmented pixels as bytes, read
    # back and cast to floats.
    cast_us, _ = time_stage(
        lambda b: numpy.frombuffer(b, numpy.uint8).astype(numpy.float32) / 255, raw, args.rounds)

    kb = statistics.mean(len(b) for b in files) / 1024
    print(f"# {cpu_model()}, {cpu_ghz():.2f} GHz, one core; Pillow {Image.__version__}")
    print(f"# {args.images} photo-like {args.width} x {args.height} JPEGs of {kb:.0f} KB "
          f"(quality 90), medians of {args.rounds} rounds")
    print("input_pipeline:")
    print(f"  measured_ghz: {cpu_ghz():.2f}")
    print("  stages:                  # microseconds per example on one core")
    print(f"    decode_jpeg: {decode_us:.0f}")
    print(f"    resize: {resize_us:.0f}")
    print(f"    augment: {augment_us:.0f}")
    print(f"    cast: {cast_us:.0f}")
    print("  offline: [decode_jpeg, resize, augment]")


if __name__ == "__main__":
    main()
