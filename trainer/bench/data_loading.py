"""Data-loading benchmark: can the loader keep the model busy? Prints a table.

    python -m trainer.bench.data_loading                     # CPU, a few minutes
    python -m trainer.bench.data_loading --images 4096 --workers 0,4,8 --device cuda --json out.json

Makes a data set of JPEG images (``--images`` at ``--source-size`` pixels, of about the bytes
of an ImageNet photo), then measures the images/s the trainer's own loaders deliver, decoded,
resized to ``--image-size`` and batched, for every ``--workers`` setting, with pinned memory
and the copy to the device when the device is CUDA:

* **local**: the image folder on local disk (``--data-dir`` of a folder in the image, or a
  mount served from the page cache);
* **staged**: ``python -m trainer.stage`` copying the folder from a local S3-compatible server
  (moto) into a node cache folder, then the copy read as a local folder: the one-time copy
  (MB/s), the second pod's check (nothing copied), and the steady rate;
* **streamed**: the same images as tar shards (``trainer.shards``) read from the S3 server by
  ranged GETs, and the same shards from local disk.

Against that it sets the rate the loader must feed: on CUDA the model's own training rate
(``--model`` at ``--batch-size``, the trainer's ``train_step``, ``--model-steps`` steps); on
the CPU the H200 figure of the trainer's README (ResNet-50, bf16 + channels_last, 4,732
images/s), since a CPU-trained ResNet-50 says nothing about a GPU's appetite (pass
``--model-steps N`` to time it on the CPU as well: ResNet-50 at batch 64 needs about 6 GB and
minutes per step on a shared 2-core VM). The loader keeps up when its images/s reaches that
rate; ``workers needed`` says how many loader processes it takes at the measured rate per
worker. Each figure is printed as it is measured. The S3 server runs on this host and shares
its CPUs; a real bucket adds network latency that more workers hide.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import statistics
import sys
import time
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch

from trainer.bench.common import make_trainer, scratch, sync
from trainer.data import DataSource, ImageFolderData
from trainer.models import SPECS
from trainer.remote import RemoteOptions
from trainer.shards import ShardData, write_shards
from trainer.stage import stage

H200_RESNET50_IMAGES_S = 4732.0
"""trainer/README.md "Measured figures": ResNet-50 b256 bf16 + channels_last on one H200."""
BUCKET = "bench-data"


def make_images(root: str, count: int, size: int, classes: int) -> int:
    """JPEGs of smooth noise (they compress like photos, not like flat colour); total bytes."""
    from PIL import Image

    g = torch.Generator().manual_seed(0)
    total = 0
    for i in range(count):
        folder = os.path.join(root, f"class{i % classes:03d}")
        os.makedirs(folder, exist_ok=True)
        coarse = torch.rand(3, size // 8, size // 8, generator=g)
        smooth = torch.nn.functional.interpolate(coarse[None], size=(size, size), mode="bilinear")[
            0
        ]
        noisy = (smooth * 200 + torch.rand(3, size, size, generator=g) * 55).clamp(0, 255)
        pixels = noisy.to(torch.uint8).permute(1, 2, 0).contiguous().numpy()
        path = os.path.join(folder, f"{i:07d}.jpg")
        Image.fromarray(pixels, mode="RGB").save(path, quality=90)
        total += os.path.getsize(path)
    return total


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_s3() -> tuple[Any, str]:
    """moto's S3 on 127.0.0.1 with the bucket; returns (server, endpoint)."""
    import boto3
    from moto.server import ThreadedMotoServer

    for name, value in {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    }.items():
        os.environ[name] = value
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
    return server, endpoint


def upload(endpoint: str, folder: str, prefix: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            client.upload_file(path, BUCKET, f"{prefix}/{os.path.relpath(path, folder)}")


def loader_rate(data: DataSource, device: torch.device, epochs: int) -> tuple[float, float]:
    """(images/s over ``epochs`` epochs after a first one that starts the workers, the first
    epoch's images/s). Each batch goes to the device (non-blocking when pinned)."""
    rates = []
    try:
        for epoch in range(epochs + 1):
            start = time.perf_counter()
            count = 0
            for step in data.steps(epoch, 0):
                for x, _ in step:
                    x = x.to(device, non_blocking=True)
                    count += x.shape[0]
            sync(device)
            rates.append(count / (time.perf_counter() - start))
    finally:
        data.close()
    return statistics.median(rates[1:]), rates[0]


def model_rate(model: str, image_size: int, batch: int, device: str, steps: int) -> float:
    """images/s of the trainer's train_step on batches already on the device."""
    trainer = make_trainer(
        [
            f"--model={model}",
            f"--image-size={image_size}",
            "--num-classes=10",
            f"--batch-size={batch}",
            f"--synthetic-samples={batch * 2}",
            f"--device={device}",
            "--max-steps=1000",
        ],
        device=device,
    )
    channels = SPECS[model].channels
    x = torch.randn(batch, channels, image_size, image_size, device=trainer.device)
    if trainer.recipe.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (batch,), device=trainer.device)
    trainer.train_step([(x, y)])  # warm-up (cuDNN autotuning, allocator)
    sync(trainer.device)
    start = time.perf_counter()
    for _ in range(steps):
        trainer.train_step([(x, y)])
    sync(trainer.device)
    return batch * steps / (time.perf_counter() - start)


def grid(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join
    out = [line(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    out.append(line("-" * w for w in widths))
    out += [
        line(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--source-size", type=int, default=400, help="side of the stored JPEGs")
    p.add_argument("--image-size", type=int, default=224, help="side the loader resizes to")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", default="0,2", help="comma-separated loader worker counts")
    p.add_argument("--epochs", type=int, default=2, help="measured epochs after a warm-up one")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--model", default="resnet50")
    p.add_argument(
        "--model-steps",
        type=int,
        default=None,
        help="timed train steps of --model (default 3 on cuda, 0 = not timed on cpu)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of this process (default 1: as in trainer.bench.benchmark, on a "
        "shared VM threads that wait for a busy core slow the 0-worker loader and the model "
        "step; loader workers run 1 thread each anyway; 0 keeps torch's default)",
    )
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    device = torch.device(args.device)
    model_steps = (
        args.model_steps if args.model_steps is not None else (3 if args.device == "cuda" else 0)
    )
    pin = device.type == "cuda"
    workers = [int(w) for w in args.workers.split(",")]
    cpus = len(os.sched_getaffinity(0))

    root = scratch("data-")
    folder = os.path.join(root, "images")
    total = make_images(folder, args.images, args.source_size, args.classes)
    print(
        f"{args.images} JPEGs of {total / args.images / 1e3:.0f} kB ({args.source_size} px) -> "
        f"{args.image_size} px, batch {args.batch_size}, {cpus} CPUs, device {device}, "
        f"pin_memory {pin}",
        flush=True,
    )
    server, endpoint = start_s3()
    options = RemoteOptions(endpoint_url=endpoint, region="us-east-1")
    results: dict[str, Any] = {
        "images": args.images,
        "bytes_per_image": total / args.images,
        "image_size": args.image_size,
        "batch_size": args.batch_size,
        "cpus": cpus,
        "device": str(device),
        "pin_memory": pin,
        "loaders": [],
    }
    header = ["source", "workers", "images/s", "first epoch"]
    rows: list[list[str]] = []
    try:
        upload(endpoint, folder, "images")
        shards_local = os.path.join(root, "shards")
        write_shards(folder, shards_local, samples_per_shard=128)
        upload(endpoint, shards_local, "shards")

        def folder_data(path: str, w: int) -> DataSource:
            return ImageFolderData(
                path, 3, args.image_size, None, 0, 0, 1, args.batch_size, 1, w, pin
            )

        def shard_data(path: str, w: int) -> DataSource:
            return ShardData(
                path, 3, args.image_size, None, 0, 0, 1, args.batch_size, 1, w, pin, options
            )

        cache = os.path.join(root, "node-cache", "images")
        t0 = time.perf_counter()
        first = stage(f"s3://{BUCKET}/images", cache, options)
        copy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = stage(f"s3://{BUCKET}/images", cache, options)
        check_s = time.perf_counter() - t0
        results["stage"] = stage_r = {
            "objects": first.objects,
            "megabytes": first.bytes / 1e6,
            "copy_s": copy_s,
            "copy_mb_s": first.bytes / 1e6 / copy_s,
            "second_pod_copied": again.copied,
            "second_pod_s": check_s,
        }
        print(
            f"staging: {stage_r['objects']} objects, {stage_r['megabytes']:.1f} MB in "
            f"{copy_s:.2f} s ({stage_r['copy_mb_s']:.0f} MB/s); second pod on the node: "
            f"{again.copied} copied, {check_s:.2f} s",
            flush=True,
        )
        sources = {
            "local folder": lambda w: folder_data(folder, w),
            "staged folder": lambda w: folder_data(cache, w),
            "streamed s3:// shards": lambda w: shard_data(f"s3://{BUCKET}/shards", w),
            "local shards": lambda w: shard_data(shards_local, w),
        }
        for name, make in sources.items():
            for w in workers:
                steady, first_epoch = loader_rate(make(w), device, args.epochs)
                results["loaders"].append(
                    {
                        "source": name,
                        "workers": w,
                        "images_s": steady,
                        "first_epoch_images_s": first_epoch,
                    }
                )
                rows.append([name, str(w), f"{steady:,.0f}", f"{first_epoch:,.0f}"])
                print(f"  {name}, {w} workers: {steady:,.0f} images/s", flush=True)
    finally:
        server.stop()
    print(grid(header, rows))

    results["gpu_target_images_s"] = H200_RESNET50_IMAGES_S
    if model_steps > 0:
        model: float | None = model_rate(
            args.model, args.image_size, args.batch_size, args.device, model_steps
        )
        print(f"{args.model} train step on {device}: {model:,.0f} images/s")
    else:
        model = None
        print(f"{args.model} train step on {device}: not timed (--model-steps 0)")
    results["model_images_s"] = model
    fed_model = device.type == "cuda" and model is not None
    target = model if fed_model and model is not None else H200_RESNET50_IMAGES_S
    results["target_images_s"] = target
    for entry in results["loaders"]:
        per_worker = entry["images_s"] / max(1, entry["workers"])
        entry["workers_needed_for_target"] = (
            None if entry["workers"] == 0 else -(-target // per_worker)
        )
        entry["keeps_up_with_target"] = entry["images_s"] >= target
    best = max(results["loaders"], key=lambda e: e["images_s"])
    per_worker = best["images_s"] / max(1, best["workers"])
    what = f"{args.model} on {device}" if fed_model else "an H200 (ResNet-50, README)"
    print(
        f"the GPU waits for data at {target:,.0f} images/s ({what}): "
        f"{'yes' if best['images_s'] < target else 'no'} with the best loader here "
        f"({best['images_s']:,.0f} images/s: {best['source']}, {best['workers']} workers); "
        f"it needs about {-(-target // per_worker):.0f} loader workers at {per_worker:,.0f} "
        "images/s each (this machine's rate per worker)"
    )
    results["wall_s"] = time.perf_counter() - started
    print(f"wall time {results['wall_s']:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
