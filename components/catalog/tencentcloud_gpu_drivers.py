"""NVIDIA driver / CUDA / cuDNN combinations a TKE node pool may ask TKE to install.

TKE installs these through the node pool's `node_config.gpu_args` (the API's `GPUArgs`:
`Driver`, `CUDA`, `CUDNN`, each a version and a name). Which combinations the console
offers depends on the instance type and OS; TKE's `DescribeGPUInfo` API returns them per
instance type (https://cloud.tencent.com/document/api/457/129269), and the CVM guide
lists the driver versions its automatic install supports
(https://cloud.tencent.com/document/product/560/30211, "GPU 后装驱动版本列表").

Each row pairs a driver with the CUDA toolkit NVIDIA ships with that exact driver (the
CUDA runfile is named `cuda_<cuda>_<driver>_linux.run`; CUDA Toolkit release notes,
table 3, https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/) and a cuDNN release
built for that CUDA major (cuDNN archive, https://developer.nvidia.com/cudnn-archive).
All four driver branches appear among the drivers TKE's qGPU page lists for Volta,
Turing and Ampere cards (https://www.tencentcloud.com/document/product/457/59103).
Checked 2026-11-30.

The `name` strings TKE expects next to each version were not found in a public source;
the names below are NVIDIA's package names and must be confirmed against
`DescribeGPUInfo` (or the console's API Inspector) before a real `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuDriverCombo:
    driver: str
    cuda: str
    cudnn: str

    @property
    def driver_name(self) -> str:
        return f"NVIDIA-Linux-x86_64-{self.driver}"

    @property
    def cuda_name(self) -> str:
        return f"cuda_{self.cuda}_{self.driver}_linux"

    @property
    def cudnn_name(self) -> str:
        return f"cudnn-{self.cuda_major}-linux-x64-v{self.cudnn}"

    @property
    def cuda_major(self) -> str:
        return self.cuda.split(".")[0]


SUPPORTED: tuple[GpuDriverCombo, ...] = (
    GpuDriverCombo(driver="470.82.01", cuda="11.4.3", cudnn="8.2.4"),
    GpuDriverCombo(driver="515.65.01", cuda="11.7.1", cudnn="8.5.0"),
    GpuDriverCombo(driver="525.85.12", cuda="12.0.1", cudnn="8.8.0"),
    GpuDriverCombo(driver="535.54.03", cuda="12.2.0", cudnn="8.9.4"),
)


def drivers() -> list[str]:
    return [combo.driver for combo in SUPPORTED]


def for_driver(driver: str) -> GpuDriverCombo | None:
    for combo in SUPPORTED:
        if combo.driver == driver:
            return combo
    return None
