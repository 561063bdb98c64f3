"""Which DCGM fields the exporter publishes (its `collectors` CSV: field, type, help).

Field names from NVIDIA/dcgm-exporter `etc/default-counters.csv` at 4.5.3-4.8.2 (the pinned
image); the exporter refuses a name its go-dcgm does not know (internal/pkg/counters/
counter_config.go:110-117), a test checks each against that list. The DCGM_FI_PROF_* fields
come from the profiling (DCP) module, which needs SYS_ADMIN in the container. The alerts
(gpu_alerts.py) read only fields listed here.
"""

from __future__ import annotations

BASE_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy since boot (in mJ)."),
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    # Off in upstream's default file; the GpuDoubleBitEccErrors alert reads it. Blank (and
    # so absent) on GPUs without ECC.
    (
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "counter",
        "Total number of double-bit volatile ECC errors.",
    ),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    (
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Rows remapped for uncorrectable errors.",
    ),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed."),
)

PROFILING_COUNTERS: tuple[tuple[str, str, str], ...] = (
    (
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "gauge",
        "Ratio of cycles the tensor (HMMA) pipe is active.",
    ),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes transmitted per second."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second."),
)


def counters_csv(profiling: bool) -> str:
    rows = BASE_COUNTERS + (PROFILING_COUNTERS if profiling else ())
    lines = ["# field, type, help (DCGM_FI_PROF_* need SYS_ADMIN)"]
    lines += [f"{field}, {kind}, {text}" for field, kind, text in rows]
    return "\n".join(lines) + "\n"
