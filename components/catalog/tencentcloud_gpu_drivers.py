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

The `name` next to each version is the installer's file name. TKE's own acceptance test of
the Terraform provider creates a node pool with driver `NVIDIA-Linux-x86_64-470.182.03.run`,
CUDA `cuda_11.4.3_470.82.01_linux.run` and cuDNN `cudnn-11.4-linux-x64-v8.2.4.15.tgz`
(terraform-provider-tencentcloud@v1.82.42, the release tencentcloud-iac-pulumi 0.2.3 runs,
tencentcloud/services/tke/resource_tc_kubernetes_node_pool_test.go:643-657): NVIDIA's file
names, the CUDA one carrying the driver its runfile bundles, not the node's. That row is
verified as a whole. For cuDNN 8.3 and later NVIDIA ships
`cudnn-linux-x86_64-<version>_cuda<major>-archive.tar.xz`; that TKE names those the same way
is inferred from the verified row, not seen.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuDriverCombo:
    driver: str
    cuda: str
    cuda_runfile_driver: str
    """The driver NVIDIA bundles in the CUDA runfile; the runfile's name carries it."""
    cudnn: str
    """Major.minor.patch, as TKE's `version` field takes it."""
    cudnn_file: str
    """NVIDIA's archive name, with the full four-part cuDNN version."""

    @property
    def driver_name(self) -> str:
        return f"NVIDIA-Linux-x86_64-{self.driver}.run"

    @property
    def cuda_name(self) -> str:
        return f"cuda_{self.cuda}_{self.cuda_runfile_driver}_linux.run"

    @property
    def cudnn_name(self) -> str:
        return self.cudnn_file


_CUDNN_8_2_4_CUDA_11_4 = "cudnn-11.4-linux-x64-v8.2.4.15.tgz"
SUPPORTED: tuple[GpuDriverCombo, ...] = (
    GpuDriverCombo("470.82.01", "11.4.3", "470.82.01", "8.2.4", _CUDNN_8_2_4_CUDA_11_4),
    # The combination of the provider's acceptance test (see above).
    GpuDriverCombo("470.182.03", "11.4.3", "470.82.01", "8.2.4", _CUDNN_8_2_4_CUDA_11_4),
    GpuDriverCombo(
        "515.65.01",
        "11.7.1",
        "515.65.01",
        "8.5.0",
        "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz",
    ),
    GpuDriverCombo(
        "525.85.12",
        "12.0.1",
        "525.85.12",
        "8.8.0",
        "cudnn-linux-x86_64-8.8.0.121_cuda12-archive.tar.xz",
    ),
    GpuDriverCombo(
        "535.54.03",
        "12.2.0",
        "535.54.03",
        "8.9.4",
        "cudnn-linux-x86_64-8.9.4.25_cuda12-archive.tar.xz",
    ),
)


def drivers() -> list[str]:
    return [combo.driver for combo in SUPPORTED]


def for_driver(driver: str) -> GpuDriverCombo | None:
    for combo in SUPPORTED:
        if combo.driver == driver:
            return combo
    return None
