"""AWS: outputs of the resources and lookups the AWS stack uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .common import (
    ACCOUNT_ID,
    FAKE_CA,
    CallHandler,
    CloudMocks,
    ResourceHandler,
    UnmockedCallError,
    autoname,
    digest,
)


def aws_arn(service: str, region: str, resource: str) -> str:
    return f"arn:aws:{service}:{region}:{ACCOUNT_ID}:{resource}"


# ---------------------------------------------------------------------------
# resources


def _eks_cluster(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    cluster = state.setdefault("name", autoname("eks", name))
    token = digest("eks", cluster, length=32).upper()
    state["arn"] = aws_arn("eks", region, f"cluster/{cluster}")
    state["endpoint"] = f"https://{token}.gr7.{region}.eks.amazonaws.com"
    state["certificateAuthority"] = {"data": FAKE_CA}
    state["identities"] = [
        {"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{token}"}]}
    ]
    vpc_config = dict(inputs.get("vpcConfig") or {})
    vpc_config["clusterSecurityGroupId"] = f"sg-{digest('cluster-sg', cluster, length=17)}"
    vpc_config["vpcId"] = f"vpc-{digest('vpc-of', cluster, length=17)}"
    state["vpcConfig"] = vpc_config
    state["status"] = "ACTIVE"
    state["platformVersion"] = "eks.1"


def _iam_role(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    role = state.setdefault("name", autoname("role", name))
    state["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:role/{role}"
    state["id"] = role
    state["uniqueId"] = "AROA" + digest("role", role, length=17).upper()


def _oidc_provider(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    url = str(inputs.get("url", "")).removeprefix("https://")
    state["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url}"


def _kms_key(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    key_id = "-".join(digest("kms", name, str(i), length=n) for i, n in enumerate((8, 4, 4, 4, 12)))
    state["keyId"] = key_id
    state["arn"] = aws_arn("kms", region, f"key/{key_id}")


def _s3_bucket(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    bucket = state.setdefault("bucket", autoname("s3", name))
    state["arn"] = f"arn:aws:s3:::{bucket}"
    state["id"] = bucket
    state["bucketDomainName"] = f"{bucket}.s3.amazonaws.com"
    state["bucketRegionalDomainName"] = f"{bucket}.s3.{region}.amazonaws.com"
    state["region"] = region


def _public_dns(ip: str, region: str) -> str:
    """EC2's public DNS name: `compute-1` in us-east-1, `<region>.compute` elsewhere."""
    zone = "compute-1" if region == "us-east-1" else f"{region}.compute"
    return f"ec2-{ip.replace('.', '-')}.{zone}.amazonaws.com"


def _eip(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    octets = bytes.fromhex(digest("eip", name, length=4))
    state["publicIp"] = f"198.51.{octets[0]}.{octets[1]}"  # TEST-NET-2, never routable
    state["publicDns"] = _public_dns(state["publicIp"], region)
    state["allocationId"] = f"eipalloc-{digest('eip', name, length=17)}"


def _launch_template(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    state["latestVersion"] = 1
    state["defaultVersion"] = 1


def _ec2_instance(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    octets = bytes.fromhex(digest("instance", name, length=8))
    state["privateIp"] = f"10.0.{octets[0]}.{octets[1] or 1}"
    if inputs.get("associatePublicIpAddress"):
        public_ip = f"198.51.{octets[2]}.{octets[3] or 1}"  # TEST-NET-2, never routable
        state["publicIp"] = public_ip
        state["publicDns"] = _public_dns(public_ip, region)
    else:
        state["publicIp"] = ""
        state["publicDns"] = ""


def _key_pair(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state.setdefault("keyName", autoname("key", name))


def _eks_node_group(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    group = state.setdefault("nodeGroupName", autoname("ng", name))
    # EKS names the node group's Auto Scaling group eks-<group>-<uuid>.
    uuid = "-".join(digest("ng", group, str(i), length=n) for i, n in enumerate((8, 4, 4, 4, 12)))
    state["resources"] = [
        {"autoscalingGroups": [{"name": f"eks-{group}-{uuid}"}], "remoteAccessSecurityGroupId": ""}
    ]
    state["status"] = "ACTIVE"


def _instance_profile(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    profile = state.setdefault("name", autoname("instance-profile", name))
    state["id"] = profile
    state["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:instance-profile/{profile}"


_ID_PREFIX = {
    "aws:ec2/instance:Instance": "i",
    "aws:ec2/keyPair:KeyPair": "key",
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/natGateway:NatGateway": "nat",
    "aws:ec2/eip:Eip": "eipalloc",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "sg",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr",
}

_RESOURCES: dict[str, ResourceHandler] = {
    "aws:eks/cluster:Cluster": _eks_cluster,
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group,
    "aws:iam/role:Role": _iam_role,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:kms/key:Key": _kms_key,
    "aws:s3/bucket:Bucket": _s3_bucket,
    "aws:ec2/eip:Eip": _eip,
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:ec2/instance:Instance": _ec2_instance,
    "aws:ec2/keyPair:KeyPair": _key_pair,
    "aws:iam/instanceProfile:InstanceProfile": _instance_profile,
}


# ---------------------------------------------------------------------------
# lookups


def _zones(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    letters = "abcdef"
    return {
        "id": region,
        "names": [f"{region}{c}" for c in letters],
        "zoneIds": [f"{region.replace('-', '')[:4]}-az{i + 1}" for i in range(len(letters))],
        "groupNames": [region] * len(letters),
        "state": args.get("state"),
    }


def _caller_identity(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": ACCOUNT_ID,
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/offline-preview",
        "userId": "AIDAOFFLINEPREVIEW",
    }


def _partition(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {"id": "aws", "partition": "aws", "dnsSuffix": "amazonaws.com"}


def _region(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": region,
        "name": region,
        "region": region,
        "endpoint": f"ec2.{region}.amazonaws.com",
    }


def _ssm_parameter(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """Public SSM parameters the program reads (the Deep Learning AMI id of the workstation)."""
    name = str(args.get("name", ""))
    if not name.startswith("/aws/service/deeplearning/ami/"):
        raise UnmockedCallError(
            f"the offline engine has no answer for the SSM parameter {name}; add one in "
            "gpuinfra/mocks/aws.py"
        )
    return {
        "id": name,
        "name": name,
        "arn": f"arn:aws:ssm:{region}::parameter{name}",
        "type": "String",
        "value": f"ami-{digest('dlami', name, region, length=17)}",
        "insecureValue": f"ami-{digest('dlami', name, region, length=17)}",
        "version": 1,
        "withDecryption": True,
    }


_CALLS: dict[str, CallHandler] = {
    "aws:ssm/getParameter:getParameter": _ssm_parameter,
    "aws:index/getAvailabilityZones:getAvailabilityZones": _zones,
    "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
    "aws:index/getPartition:getPartition": _partition,
    "aws:index/getRegion:getRegion": _region,
}


def _finish(type_: str, name: str, state: dict[str, Any], resource_id: str, region: str) -> None:
    if "arn" not in state:
        service = type_.split(":")[1].split("/")[0]
        state["arn"] = aws_arn(service, region, f"{type_.split(':')[-1].lower()}/{resource_id}")


MOCKS = CloudMocks(resources=_RESOURCES, id_prefixes=_ID_PREFIX, calls=_CALLS, finish=_finish)
