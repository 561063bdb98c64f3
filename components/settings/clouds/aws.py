"""What settings validation needs to know about AWS."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..reader import ConfigReader
from .rules import CloudRules

_IAM_PRINCIPAL_ARN = re.compile(
    r"^arn:aws(-cn|-us-gov|-iso[a-z]*)?:iam::\d{12}:(role|user)/[\w+=,.@/-]{1,512}$"
)


def s3_bucket_name_problem(name: str) -> str | None:
    """Why `name` breaks S3's general-purpose bucket naming rules, or None."""
    if not 3 <= len(name) <= 63:
        return "must be 3 to 63 characters long"
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", name):
        return (
            "only lowercase letters, digits, dots and hyphens, "
            "starting and ending with a letter or digit"
        )
    if ".." in name:
        return "must not contain two adjacent dots"
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", name):
        return "must not look like an IP address"
    for prefix in ("xn--", "sthree-", "amzn-s3-demo-"):
        if name.startswith(prefix):
            return f"must not start with '{prefix}' (reserved by S3)"
    for suffix in ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"):
        if name.endswith(suffix):
            return f"must not end with '{suffix}' (reserved by S3)"
    return None


RULES = CloudRules(
    cloud="aws",
    title="AWS",
    region_key="aws:region",
    region_example="us-east-1",
    region_pattern=re.compile(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d$"),
    default_system_instance_type="m6i.large",
    bucket_name_problem=s3_bucket_name_problem,
)


@dataclass(frozen=True)
class AwsSettings:
    """AWS only (read here)."""

    cluster_admin_arns: tuple[str, ...]
    """IAM principals with cluster-admin access entries besides the deploying principal."""


def parse_aws(r: ConfigReader) -> AwsSettings:
    arns = r.strings("clusterAdminArns")
    seen: set[str] = set()
    for arn in arns:
        # EKS access entries take the IAM ARN of a role or user, never an STS session ARN or a
        # service-linked role, one entry per principal (EKS user guide, "Create access
        # entries", awsdocs/amazon-eks-user-guide@4d52b4d latest/ug/manage-access/k8s-access/
        # grant-k8s-access.adoc:202-208 and :257).
        if ":assumed-role/" in arn:
            role = arn.split(":assumed-role/", 1)[1].split("/", 1)[0]
            r.problem(
                "clusterAdminArns",
                arn,
                f"is an STS session ARN; give the role's IAM ARN, arn:aws:iam::<account>:role/"
                f"{role} (with its path, if any)",
            )
        elif not _IAM_PRINCIPAL_ARN.match(arn):
            r.problem(
                "clusterAdminArns",
                arn,
                "must be an IAM role or user ARN such as arn:aws:iam::111122223333:role/admins",
            )
        elif ":role/aws-service-role/" in arn:
            r.problem("clusterAdminArns", arn, "EKS access entries refuse service-linked roles")
        elif arn in seen:
            r.problem("clusterAdminArns", arn, "listed twice (EKS allows one entry per principal)")
        seen.add(arn)
    return AwsSettings(cluster_admin_arns=arns)
