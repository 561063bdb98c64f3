"""Names vulture cannot see used (read by torch, botocore or Python), for test_no_dead_code."""

# ruff: noqa
import torch

torch.backends.cuda.matmul.allow_tf32  # assigned: switches that torch reads
torch.backends.cudnn.allow_tf32
torch.backends.cudnn.benchmark
frame  # a signal handler's required parameter
worker_id  # a DataLoader worker_init_fn's required parameter
METHOD  # botocore's name for a credential provider
tell  # DCP asks its write streams for their position (trainer.sharded.HashingStream)
