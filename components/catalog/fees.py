"""Non-GPU prices the cost estimate needs: control planes, NAT, storage, CPU nodes.

Each fee has its source and the date it was read; ``usd_per_hour=None`` means no citable
figure was found and ``note`` says why, so the estimate shows "unknown" rather than a
guess. Hourly figures for monthly prices use AWS's 730 hours per month.
"""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730
"""The month AWS's pricing pages use (365 x 24 / 12)."""


@dataclass(frozen=True)
class Fee:
    usd_per_hour: float | None
    unit: str
    """What one `usd_per_hour` pays for: "cluster", "gateway", "GB", "node"."""
    region: str
    source: str
    date: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.usd_per_hour is None and not self.note:
            raise ValueError("a fee of None must say why in `note`")


def per_gb_month(usd: float) -> float:
    return usd / HOURS_PER_MONTH


@dataclass(frozen=True)
class UsageFee:
    """A price per unit of use (GB processed, requests): billed by traffic the plan cannot
    know, so the estimate lists it as an unpriced line with this rate instead of a total."""

    rate: str
    """The rate as the pricing page gives it, e.g. "$0.045 per GB processed"."""
    region: str
    source: str
    date: str


# --- AWS (us-east-1 list prices) ---------------------------------------------------------
EKS_STANDARD = Fee(
    0.10,
    "cluster",
    "all",
    "https://aws.amazon.com/eks/pricing/ and https://aws.amazon.com/blogs/containers/"
    "amazon-eks-extended-support-for-kubernetes-versions-pricing/",
    "2026-11-30",
    "Kubernetes version in standard support (first 14 months after its EKS release).",
)
EKS_EXTENDED = Fee(
    0.60,
    "cluster",
    "all",
    EKS_STANDARD.source,
    "2026-11-30",
    "Kubernetes version in extended support (months 15-26): $0.60 per cluster-hour "
    "since the April 2024 billing cycle.",
)
EKS_END_OF_STANDARD_SUPPORT: dict[str, str] = {
    # Amazon EKS Kubernetes release calendar (https://docs.aws.amazon.com/eks/latest/userguide/
    # kubernetes-versions.html, as listed at https://endoflife.date/amazon-eks, 2026-11-30).
    # Extended support ends 12 months after each date (EKS_EXTENDED_SUPPORT_MONTHS).
    "1.30": "2025-07-23",
    "1.31": "2025-11-26",
    "1.32": "2026-03-23",
    "1.33": "2026-07-29",
    "1.34": "2026-12-02",
    "1.35": "2027-03-27",
}
EKS_EXTENDED_SUPPORT_MONTHS = 12
"""Extended support lasts 12 months after standard support ends; after it EKS upgrades the
control plane itself (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html,
2026-11-30)."""
AWS_NAT_GATEWAY = Fee(
    0.045,
    "gateway",
    "us-east-1",
    "https://aws.amazon.com/vpc/pricing/ (NAT gateway hour)",
    "2026-11-30",
    "Hourly charge only; data processing is a separate usage line (AWS_NAT_DATA_PROCESSING).",
)
AWS_NAT_DATA_PROCESSING = UsageFee(
    "$0.045 per GB processed",
    "us-east-1",
    "https://aws.amazon.com/vpc/pricing/ (NAT gateway data processing)",
    "2026-11-30",
)
AWS_PUBLIC_IPV4 = Fee(
    0.005,
    "address",
    "all",
    "https://aws.amazon.com/vpc/pricing/ (public IPv4 address, charged since 2024-02-01)",
    "2026-11-30",
)
AWS_S3_STANDARD = Fee(
    per_gb_month(0.023),
    "GB",
    "us-east-1",
    "https://aws.amazon.com/s3/pricing/ (S3 Standard, first 50 TB: $0.023 per GB-month)",
    "2026-11-30",
    "Storage only; requests and transfer out are not estimated; old versions kept by "
    "versioning count as stored data.",
)
AWS_S3_REQUESTS = UsageFee(
    "$0.005 per 1,000 PUT/COPY/POST/LIST and $0.0004 per 1,000 GET requests (S3 Standard)",
    "us-east-1",
    "https://aws.amazon.com/s3/pricing/ (requests and data retrievals)",
    "2026-11-30",
)
AWS_CLOUDWATCH_LOGS = UsageFee(
    "$0.50 per GB ingested and $0.03 per GB-month stored (Standard log class)",
    "us-east-1",
    "https://aws.amazon.com/cloudwatch/pricing/ (Logs, us-east-1; the same figures at "
    "https://c3x.dev/blog/cloudwatch-logs-cost-optimization, 'us-east-1, June 2026')",
    "2026-11-30",
)
AWS_EBS_GP3 = Fee(
    per_gb_month(0.08),
    "GB",
    "us-east-1",
    "https://aws.amazon.com/ebs/pricing/ (gp3: $0.08 per GB-month, 3000 IOPS and "
    "125 MB/s included)",
    "2026-11-30",
)
AWS_KMS_KEY = Fee(
    per_gb_month(1.0),
    "key",
    "all",
    "https://aws.amazon.com/kms/pricing/ (customer managed key: $1 per month)",
    "2026-11-30",
    "Requests beyond the free tier are not estimated.",
)
AWS_CPU_INSTANCES: dict[str, Fee] = {
    # The system pool's CPU types (the catalog lists GPU types only).
    "m6i.large": Fee(
        0.096,
        "node",
        "us-east-1",
        "https://aws.amazon.com/ec2/pricing/on-demand/ (us-east-1, Linux)",
        "2026-11-30",
    ),
    "m6i.xlarge": Fee(
        0.192,
        "node",
        "us-east-1",
        "https://aws.amazon.com/ec2/pricing/on-demand/ (us-east-1, Linux)",
        "2026-11-30",
    ),
}

# --- Alibaba Cloud -----------------------------------------------------------------------
ACK_PRO = Fee(
    0.09,
    "cluster",
    "varies",
    "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/product-overview/"
    "ack-pro-cluster-billing (USD 0.09 per cluster per hour; 'prices may vary by region')",
    "2026-11-30",
    "ACK managed Pro cluster management fee; Basic clusters have none. The API server's CLB "
    "is billed separately and not estimated.",
)
_ALI_NO_PRICE = (
    "Alibaba Cloud publishes this price only in its dynamically rendered price calculator; "
    "no citable static figure was found."
)
ALICLOUD_NAT_GATEWAY = Fee(
    None,
    "gateway",
    "varies",
    "https://www.alibabacloud.com/help/en/nat-gateway/product-overview/billing-overview",
    "2026-11-30",
    _ALI_NO_PRICE,
)
ALICLOUD_API_SERVER_CLB = Fee(
    None,
    "load balancer",
    "varies",
    "aliyun/terraform-provider-alicloud@ace5bcf8 "
    "alicloud/resource_alicloud_cs_managed_kubernetes.go:190 (ACK's API server CLB: 'the "
    "charge of the load balancer has been changed to PayByCLCU', "
    "an instance fee plus capacity units)",
    "2026-11-30",
    "ACK creates one CLB per cluster for its API server, billed to the account while the "
    "cluster exists; " + _ALI_NO_PRICE,
)
ALICLOUD_OSS_STANDARD = Fee(
    None,
    "GB",
    "varies",
    "https://www.alibabacloud.com/product/oss/pricing",
    "2026-11-30",
    _ALI_NO_PRICE,
)

# --- Tencent Cloud -----------------------------------------------------------------------
_TENCENT_NO_PRICE = (
    "Tencent Cloud shows this price per region only in the console/price calculator; no "
    "citable static figure was found."
)
TKE_MANAGEMENT = Fee(
    None,
    "cluster",
    "varies",
    "https://www.tencentcloud.com/document/product/457/45157 (cluster management fees by "
    "cluster model; 'unit prices vary by region, see the console')",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)
TENCENT_NAT_GATEWAY = Fee(
    None,
    "gateway",
    "varies",
    "https://www.tencentcloud.com/document/product/1015/30236",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)
TENCENT_COS_STANDARD = Fee(
    None,
    "GB",
    "varies",
    "https://www.tencentcloud.com/pricing/cos",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)

# Lines the estimate lists as unpriced until the prices issue (#21) finds citable figures:
# each says where the price lives, so the gap is visible instead of counting as $0.
ALICLOUD_EIP = Fee(
    None,
    "address",
    "varies",
    "https://www.alibabacloud.com/help/en/eip/ (EIP billing overview: pay-by-traffic or "
    "pay-by-bandwidth plus an instance fee)",
    "2026-11-30",
    _ALI_NO_PRICE,
)
ALICLOUD_ESSD = Fee(
    None,
    "GB",
    "varies",
    "https://www.alibabacloud.com/help/en/ecs/ (block storage billing: ESSD per GB-month)",
    "2026-11-30",
    _ALI_NO_PRICE,
)
TENCENT_EIP = Fee(
    None,
    "address",
    "varies",
    "https://www.tencentcloud.com/document/product/213 (EIP billing: idle addresses and "
    "traffic are billed)",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)
TENCENT_CBS_PREMIUM = Fee(
    None,
    "GB",
    "varies",
    "https://www.tencentcloud.com/document/product/362 (CBS billing: premium cloud disk per "
    "GB-month)",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)
TENCENT_CLB = Fee(
    None,
    "load balancer",
    "varies",
    "https://www.tencentcloud.com/document/product/214 (CLB billing; a TKE public API "
    "endpoint is served by a CLB)",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)
ALICLOUD_KMS_KEY = Fee(
    None,
    "key",
    "varies",
    "https://www.alibabacloud.com/help/en/kms/ (KMS billing: keys in a KMS instance or "
    "pay-as-you-go keys)",
    "2026-11-30",
    _ALI_NO_PRICE,
)
TENCENT_KMS_KEY = Fee(
    None,
    "key",
    "varies",
    "https://www.tencentcloud.com/document/product/1030 (KMS billing: per key per month)",
    "2026-11-30",
    _TENCENT_NO_PRICE,
)

# --- Volcano Engine (issue 27) -----------------------------------------------------------
_VOLCENGINE_NO_PRICE = (
    "Volcano Engine shows this price per region in its logged-in console/price calculator; no "
    "citable static figure was found."
)
VKE_MANAGEMENT = Fee(
    None,
    "cluster",
    "varies",
    "VKE billing (console): cluster management fee by cluster type, if any",
    "2026-11-30",
    _VOLCENGINE_NO_PRICE + " Whether a VKE cluster's control plane is billed was not confirmed.",
)
VOLCENGINE_NAT_GATEWAY = Fee(
    None,
    "gateway",
    "varies",
    "Volcano Engine NAT gateway billing (Small specification, pay-as-you-go by specification)",
    "2026-11-30",
    _VOLCENGINE_NO_PRICE + " The EIP is billed by traffic on top.",
)
VOLCENGINE_EIP = Fee(
    None,
    "address",
    "varies",
    "Volcano Engine EIP billing (console: by traffic or by bandwidth)",
    "2026-11-30",
    _VOLCENGINE_NO_PRICE,
)
VOLCENGINE_TOS_STANDARD = Fee(
    None,
    "GB",
    "varies",
    "TOS billing (standard storage class)",
    "2026-11-30",
    _VOLCENGINE_NO_PRICE,
)
