#!/usr/bin/env python3
"""Writes a synthetic image-folder data set (PNG), for trying fedberry's
images:DIR source without photos of your own: one sub-folder per class
(circle, square, stripes), coloured shapes on noisy backgrounds.

    /usr/bin/python3 examples/make_shape_images.py --out shapes --size 32

writes shapes/train/<class>/*.png and shapes/test/<class>/*.png. Uses only
the Python standard library (PNG by hand with zlib).
"""
import argparse
import os
import random
import struct
import zlib

CLASSES = ["circle", "square", "stripes"]


def png(path: str, pixels, size: int) -> None:
    raw = b"".join(b"\x00" + bytes(pixels[y * size * 3:(y + 1) * size * 3])
                   for y in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


def image(rng: random.Random, kind: str, size: int):
    bg = [rng.randrange(0, 90) for _ in range(3)]
    fg = [rng.randrange(150, 256) for _ in range(3)]
    cx, cy = rng.uniform(0.35, 0.65) * size, rng.uniform(0.35, 0.65) * size
    r = rng.uniform(0.2, 0.3) * size
    period = rng.randrange(3, 6)
    out = []
    for y in range(size):
        for x in range(size):
            if kind == "circle":
                inside = (x - cx) ** 2 + (y - cy) ** 2 < r * r
            elif kind == "square":
                inside = abs(x - cx) < r and abs(y - cy) < r
            else:
                inside = (x // period) % 2 == 0
            base = fg if inside else bg
            out.extend(max(0, min(255, c + rng.randrange(-20, 21)))
                       for c in base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="shapes")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--train", type=int, default=150,
                        help="training images per class")
    parser.add_argument("--test", type=int, default=50,
                        help="test images per class")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for split, count in (("train", args.train), ("test", args.test)):
        for kind in CLASSES:
            folder = os.path.join(args.out, split, kind)
            os.makedirs(folder, exist_ok=True)
            for i in range(count):
                png(os.path.join(folder, f"{kind}-{i:04d}.png"),
                    image(rng, kind, args.size), args.size)
    print(f"wrote {args.out}/train and {args.out}/test: {len(CLASSES)} "
          f"classes, {args.size}x{args.size} RGB PNG")


if __name__ == "__main__":
    main()
