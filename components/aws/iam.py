"""Small IAM helpers shared by the AWS components."""

from __future__ import annotations

import json


def service_trust_policy(service: str) -> str:
    """Trust policy letting one AWS service principal assume a role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": service},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                }
            ],
        }
    )


def managed_policy_arn(partition: str, policy: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{policy}"
