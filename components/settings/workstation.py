"""Settings of the optional GPU workstation: one GPU VM with SSH, JupyterLab and TensorBoard."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from components import catalog
from components.catalog import GpuInstanceType

from .model import CapacityType, GpuPoolSettings
from .reader import ConfigReader

SubnetChoice = Literal["public", "private"]
SSH_KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
)
_SSH_KEY = re.compile(r"^(\S+) (\S+)( .*)?$")
DISK_GB = (50, 16384)
CLOUD_DISK_GB: dict[str, tuple[int, int, str]] = {
    "alicloud": (
        100,
        2048,
        "the disk is the ECS system disk (at most 2048), and Alibaba's Ubuntu 22.04 image "
        "with the GPU driver is 100",
    ),
}
"""Where a cloud's workstation disk has other bounds than the generic ones, and why."""
IMAGE_FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "aws": (
        "the Deep Learning AMI GPU PyTorch 2.9 (Ubuntu 24.04)",
        ("g4dn", "g5", "g6", "gr6", "g6e", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200"),
    ),
}
"""Instance families the workstation's image supports, where the image limits them. AWS:
`supported_ec2_instances` of the DLAMI release notes (x86_64, 2026-03-20: "G4dn, G5, G6,
Gr6, G6e, P4, P4de, P5, P5e, P5en, P6-B200", seen at https://docs.amazonaws.cn/dlami/latest/
devguide/aws-deep-learning-ami-gpupt29oss-ul2404-2026-03-20.md, the same page as on
docs.aws.amazon.com); P3 (V100) is not among them."""


@dataclass(frozen=True)
class WorkstationSettings:
    instance: GpuInstanceType
    capacity_type: CapacityType
    root_disk_gb: int
    ssh_public_key: str
    subnet: SubnetChoice
    """public: a public IP in a public subnet; private: reach it through a VPN or bastion."""


def ssh_key_problem(key: str) -> str | None:
    """Why `key` is not one OpenSSH public key line, or None."""
    match = _SSH_KEY.match(key.strip())
    if match is None or "\n" in key.strip():
        return "must be one OpenSSH public key line, e.g. `ssh-ed25519 AAAA... you@laptop`"
    kind, body = match.group(1), match.group(2)
    if kind not in SSH_KEY_TYPES:
        return f"key type {kind!r} is not one of {', '.join(SSH_KEY_TYPES)}"
    try:
        blob = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return "the key body is not base64"
    # The blob starts with the key type again, length-prefixed (RFC 4253 section 6.6).
    if len(blob) < 4 or blob[4 : 4 + int.from_bytes(blob[:4], "big")] != kind.encode():
        return f"the key body does not hold a {kind} key (truncated or pasted wrong?)"
    return None


def parse_workstation(
    r: ConfigReader, cloud: str, gpu_pools: Sequence[GpuPoolSettings]
) -> WorkstationSettings | None:
    """None when `workstationEnabled` is false; the other keys are then still type-checked."""
    enabled = r.boolean("workstationEnabled")
    instance_type = r.string("workstationInstanceType")
    model = r.string("workstationGpuModel")
    count = r.integer("workstationGpuCount")
    pool = r.string("workstationGpuPool")
    capacity = cast(CapacityType, r.one_of("workstationCapacityType", ("spot", "onDemand")))
    disk = r.integer("workstationRootDiskGb")
    key = r.string("workstationSshPublicKey")
    subnet = cast(SubnetChoice, r.one_of("workstationSubnet", ("public", "private")))
    if not enabled:
        return None

    low, high, why = CLOUD_DISK_GB.get(cloud, (*DISK_GB, ""))
    if not low <= disk <= high:
        r.problem(
            "workstationRootDiskGb",
            disk,
            f"must be between {low} and {high} (GB)" + (f" on {cloud}: {why}" if why else ""),
        )
    if not key:
        r.problem(
            "workstationSshPublicKey",
            None,
            "required when workstationEnabled is true: your OpenSSH public key "
            "(e.g. the contents of ~/.ssh/id_ed25519.pub)",
        )
    else:
        problem = ssh_key_problem(key)
        if problem:
            r.problem(
                "workstationSshPublicKey", key[:40] + ("..." if len(key) > 40 else ""), problem
            )

    if pool and (instance_type or model):
        r.problem(
            "workstationGpuPool",
            pool,
            "takes a pool's type only when neither workstationInstanceType nor "
            "workstationGpuModel is set; remove one",
        )
    if cloud == "tencentcloud" and capacity == "spot":
        r.problem(
            "workstationCapacityType",
            capacity,
            "not on Tencent Cloud: a SPOTPAID instance's encrypted data disk (which holds the "
            "notebooks) cannot be deleted with it (terraform-provider-tencentcloud@v1.82.42 "
            "resource_tc_instance.go:826-833), so `pulumi destroy` would leave it billing, and "
            "a reclaim releases the instance; use onDemand",
        )
    entry = _instance(r, cloud, instance_type, model, count, pool, gpu_pools)
    if entry is not None:
        _check_image_supports(r, cloud, entry, instance_type, model)
    if entry is None or r.problems:
        return None
    return WorkstationSettings(
        instance=entry,
        capacity_type=capacity,
        root_disk_gb=disk,
        ssh_public_key=key.strip(),
        subnet=subnet,
    )


def _check_image_supports(
    r: ConfigReader, cloud: str, entry: GpuInstanceType, instance_type: str, model: str
) -> None:
    if cloud not in IMAGE_FAMILIES:
        return
    image, families = IMAGE_FAMILIES[cloud]
    family = entry.instance_type.split(".", 1)[0]
    if family in families:
        return
    supported = [
        e.instance_type
        for e in catalog.instance_types(cloud)
        if e.instance_type.split(".", 1)[0] in families
    ]
    why = (
        f"{entry.instance_type} ({entry.gpu_model}) is not supported by the workstation's image, "
        f"{image}, which supports {', '.join(families)}; choose one of: {', '.join(supported)}"
    )
    if instance_type:
        r.problem("workstationInstanceType", instance_type, why)
    elif model:
        r.problem("workstationGpuModel", model, why)
    else:
        r.problem(
            "workstationInstanceType",
            None,
            f"empty, so the workstation would take the GPU pool's type, but {why}",
        )


def _instance(
    r: ConfigReader,
    cloud: str,
    instance_type: str,
    model: str,
    count: int,
    pool: str,
    gpu_pools: Sequence[GpuPoolSettings],
) -> GpuInstanceType | None:
    known = ", ".join(e.instance_type for e in catalog.instance_types(cloud))
    if count < 1:
        r.problem("workstationGpuCount", count, "must be 1 or more")
        return None
    if instance_type:
        entry = catalog.find(cloud, instance_type)
        if entry is None:
            r.problem(
                "workstationInstanceType",
                instance_type,
                f"not a GPU instance type the catalog knows on {cloud} (the workstation needs "
                f"a GPU); known: {known}",
            )
        elif model and not catalog.matches_model(entry.gpu_model, model):
            r.problem(
                "workstationGpuModel",
                model,
                f"{instance_type} has {entry.gpu_model} GPUs; drop workstationGpuModel or make "
                "the two agree",
            )
            return None
        return entry
    if model:
        entry = catalog.pick(cloud, model, count)
        if entry is None:
            r.problem(
                "workstationGpuModel",
                model,
                f"no {cloud} instance type in the catalog has {count} x {model}; known models: "
                + ", ".join(catalog.known_models(cloud)),
            )
        return entry
    # Neither given: a GPU pool's type (the first, or workstationGpuPool's), so one setting
    # turns the workstation on.
    if pool:
        named = next((p for p in gpu_pools if p.name == pool), None)
        if named is None:
            r.problem(
                "workstationGpuPool",
                pool,
                "names no GPU pool of this stack; pools: "
                + (
                    ", ".join(f"{p.name} ({p.instance.instance_type})" for p in gpu_pools) or "none"
                ),
            )
        return named.instance if named is not None else None
    return gpu_pools[0].instance if gpu_pools else None
