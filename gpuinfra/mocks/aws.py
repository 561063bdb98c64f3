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


def _subnet(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    """EC2 fills in the zone name from the zone ID and the other way round."""
    by_name = zone_ids(region)
    by_id = {zone_id: zone for zone, zone_id in by_name.items()}
    if inputs.get("availabilityZoneId"):
        state["availabilityZone"] = by_id.get(inputs["availabilityZoneId"], "")
    elif inputs.get("availabilityZone"):
        state["availabilityZoneId"] = by_name.get(inputs["availabilityZone"], "")


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
    "aws:ec2/subnet:Subnet": _subnet,
}


# ---------------------------------------------------------------------------
# lookups


# Zone name -> zone ID in the mock account, as DescribeAvailabilityZones lists them. Names map
# to different IDs in every account (EC2 user guide, "AZ IDs"); this account's mapping puts
# the zone IDs EKS refuses (use1-az3, usw1-az2, cac1-az3) among the first names, so a program
# that picks zones by name index meets them as it would in many real accounts.
_ZONE_IDS: dict[str, dict[str, str]] = {
    "us-east-1": {
        "us-east-1a": "use1-az6",
        "us-east-1b": "use1-az3",
        "us-east-1c": "use1-az1",
        "us-east-1d": "use1-az2",
        "us-east-1e": "use1-az4",
        "us-east-1f": "use1-az5",
    },
    "us-west-1": {"us-west-1a": "usw1-az2", "us-west-1b": "usw1-az1", "us-west-1c": "usw1-az3"},
    "ca-central-1": {
        "ca-central-1a": "cac1-az3",
        "ca-central-1b": "cac1-az1",
        "ca-central-1d": "cac1-az2",
    },
}
_DIRECTIONS = {"east": "e", "west": "w", "north": "n", "south": "s", "central": "c"}


def _region_code(region: str) -> str:
    """`use1` for us-east-1, `apse1` for ap-southeast-1: the prefix of the region's zone IDs."""
    parts = region.split("-")
    direction = parts[1]
    for word, letter in (("southeast", "se"), ("northeast", "ne"), ("southwest", "sw")):
        if direction == word:
            return f"{parts[0]}{letter}{parts[-1]}"
    return f"{parts[0]}{_DIRECTIONS.get(direction, direction[:1])}{parts[-1]}"


def zone_ids(region: str) -> dict[str, str]:
    """Every zone name of `region` in the mock account with its zone ID, sorted by name."""
    known = _ZONE_IDS.get(region)
    if known is None:
        code = _region_code(region)
        known = {f"{region}{letter}": f"{code}-az{i + 1}" for i, letter in enumerate("abc")}
    return dict(sorted(known.items()))


def _zones(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """DescribeAvailabilityZones sorted by name, then `excludeNames`/`excludeZoneIds` dropped,
    as the provider does (terraform-provider-aws internal/service/ec2/
    ec2_availability_zones_data_source.go, dataSourceAvailabilityZonesRead)."""
    excluded_names = set(args.get("excludeNames") or [])
    excluded_ids = set(args.get("excludeZoneIds") or [])
    kept = [
        (name, zone_id)
        for name, zone_id in zone_ids(region).items()
        if name not in excluded_names and zone_id not in excluded_ids
    ]
    return {
        "id": region,
        "names": [name for name, _ in kept],
        "zoneIds": [zone_id for _, zone_id in kept],
        "groupNames": [region],
        "state": args.get("state"),
    }


DEPLOY_ROLE = "gpuinfra-deploy"
"""The role the mock caller has assumed: `pulumi up` usually runs as an assumed role (CI's
OIDC role, an SSO role), whose caller ARN is an STS session ARN, not the role's IAM ARN."""


def _caller_identity(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": ACCOUNT_ID,
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{DEPLOY_ROLE}/offline-preview",
        "userId": "AROAOFFLINEPREVIEW:offline-preview",
    }


def _session_context(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """The IAM role behind an STS session ARN (`issuerArn`); other ARNs come back as given."""
    arn = str(args.get("arn", ""))
    prefix = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/"
    if arn.startswith(prefix):
        role, _, session = arn.removeprefix(prefix).partition("/")
        return {
            "id": arn,
            "arn": arn,
            "issuerArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{role}",
            "issuerId": "AROAOFFLINEPREVIEW",
            "issuerName": role,
            "sessionName": session,
        }
    return {"id": arn, "arn": arn, "issuerArn": arn, "issuerId": "", "issuerName": "",
            "sessionName": ""}  # fmt: skip


DEPLOYED_CLUSTERS: dict[str, dict[str, Any]] = {}
"""EKS clusters the mock account already has, by name: `{"version": "1.34", "nodeGroups":
{"name": "1.34"}}`. Empty: a fresh account (the offline preview cannot see a real one); tests
fill it to play an upgrade."""


def _eks_clusters(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {"id": region, "names": sorted(DEPLOYED_CLUSTERS)}


def _eks_cluster_lookup(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    name = str(args.get("name", ""))
    if name not in DEPLOYED_CLUSTERS:
        raise UnmockedCallError(f"no EKS cluster named {name} in the mock account")
    return {"id": name, "name": name, "version": DEPLOYED_CLUSTERS[name]["version"]}


def _eks_node_groups(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    cluster = DEPLOYED_CLUSTERS.get(str(args.get("clusterName", "")), {})
    return {"id": args.get("clusterName"), "names": sorted(cluster.get("nodeGroups", {}))}


def _eks_node_group_lookup(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    cluster = DEPLOYED_CLUSTERS.get(str(args.get("clusterName", "")), {})
    name = str(args.get("nodeGroupName", ""))
    return {"id": name, "nodeGroupName": name, "version": cluster["nodeGroups"][name]}


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
    "aws:iam/getSessionContext:getSessionContext": _session_context,
    "aws:eks/getClusters:getClusters": _eks_clusters,
    "aws:eks/getCluster:getCluster": _eks_cluster_lookup,
    "aws:eks/getNodeGroups:getNodeGroups": _eks_node_groups,
    "aws:eks/getNodeGroup:getNodeGroup": _eks_node_group_lookup,
    "aws:index/getPartition:getPartition": _partition,
    "aws:index/getRegion:getRegion": _region,
}


def _finish(type_: str, name: str, state: dict[str, Any], resource_id: str, region: str) -> None:
    if "arn" not in state:
        service = type_.split(":")[1].split("/")[0]
        state["arn"] = aws_arn(service, region, f"{type_.split(':')[-1].lower()}/{resource_id}")


MOCKS = CloudMocks(resources=_RESOURCES, id_prefixes=_ID_PREFIX, calls=_CALLS, finish=_finish)
