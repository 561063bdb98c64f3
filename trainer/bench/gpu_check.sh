#!/usr/bin/env bash
# One-shot check of the reference trainer on a lent GPU machine (one NVIDIA H200, torch + CUDA
# installed, no network, no pip): ResNet-50 throughput in fp32/tf32/fp16/bf16/bf16+channels_last,
# the default recipe, checkpoint costs, SIGTERM -> exit 75 + emergency checkpoint, resume, DDP;
# FSDP with sharded (DCP) checkpoints, SIGTERM and resume on the GPU; and asynchronous
# checkpoints of a 1.14 B-parameter GPT + AdamW, DCP async_save against the file format
# (blocking time, background write, step time meanwhile). Needs ~30 GB of disk and host RAM.
#
#   bash trainer/bench/gpu_check.sh                   # on the GPU machine, from the repo root
#   GPU_CHECK_CPU=1 bash trainer/bench/gpu_check.sh   # tiny CPU rehearsal of every step
#   GPU_CHECK_ONLY=formats bash trainer/bench/gpu_check.sh   # only some steps (see gpu_check.py)
#
# Env: PYTHON (default python3), GPU_CHECK_TIMEOUT (s, default 540),
#      GPU_CHECK_JSON (also write the results there), GPU_CHECK_ONLY (comma-separated steps).
# Exits 0 when every check passed, 1 when one failed, 124 on timeout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PY="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi
"$PY" - <<'PYCHECK'
import torch
print(f"gpu_check: torch {torch.__version__}, cuda {torch.version.cuda}, "
      f"available {torch.cuda.is_available()}")
PYCHECK
exec timeout --signal=TERM --kill-after=15 "${GPU_CHECK_TIMEOUT:-540}" \
    "$PY" -m trainer.bench.gpu_check "$@"
