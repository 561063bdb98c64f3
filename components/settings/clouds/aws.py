"""What settings validation needs to know about AWS."""

from __future__ import annotations

import re

from .rules import CloudRules


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
