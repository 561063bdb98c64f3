"""The ports every cloud's admin security group opens, and only to `adminCidrs`."""

from __future__ import annotations

ADMIN_PORTS: tuple[tuple[int, str], ...] = ((22, "SSH"), (8888, "Jupyter"), (6006, "TensorBoard"))
ADMIN_GROUP_DESCRIPTION = "gpuinfra admin access: " + ", ".join(
    f"{service} {port}" for port, service in ADMIN_PORTS
)
