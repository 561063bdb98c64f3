"""Alibaba Cloud: outputs of the resources and lookups the Alibaba Cloud stack uses.

Ids follow Alibaba's shapes (`vpc-bp1...`, `vsw-...`, `ngw-...`, cluster ids `c` + 32 hex,
RAM ARNs `acs:ram::<16-digit uid>:role/<name>`); values are hashes, never real resources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from .common import FAKE_CA, CallHandler, CloudMocks, ResourceHandler, autoname, digest

ACCOUNT_UID = "1234567890123456"
"""Alibaba Cloud account ids are 16 digits."""
ACK_VERSIONS = ("1.31.9-aliyun.1", "1.32.7-aliyun.1", "1.33.3-aliyun.1", "1.33.1-aliyun.1")


def _cluster_id(name: str) -> str:
    return "c" + digest("ack", name, length=32)


# ---------------------------------------------------------------------------
# resources


def _public_address(cluster_id: str) -> str:
    """The address ACK's API server CLB would get on the internet (TEST-NET-2, never routed)."""
    octet = bytes.fromhex(digest("ack-slb-internet", cluster_id, length=2))[0]
    return f"198.51.100.{octet or 1}"


def _managed_kubernetes(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    """What the provider reads back after CreateCluster (resource_alicloud_cs_managed_kubernetes.go
    Read): dropped falsy booleans mean the API defaults apply, and ACK makes a NAT gateway."""
    cluster_id = _cluster_id(name)
    state["id"] = cluster_id
    state.setdefault("name", autoname("ack", name))
    state["version"] = inputs.get("version") or ACK_VERSIONS[0]
    provider = f"ack-rrsa-{cluster_id}"
    enabled = bool(inputs.get("enableRrsa"))
    state["rrsaMetadata"] = {
        "enabled": enabled,
        "rrsaOidcIssuerUrl": f"https://oidc-ack-{region}.oss-{region}.aliyuncs.com/{cluster_id}"
        if enabled
        else "",
        "ramOidcProviderName": provider if enabled else "",
        "ramOidcProviderArn": f"acs:ram::{ACCOUNT_UID}:oidc-provider/{provider}" if enabled else "",
    }
    state["securityGroupId"] = inputs.get("securityGroupId") or (
        f"sg-{digest('ack-sg', cluster_id, length=20)}"
    )
    # IsEnterpriseSecurityGroup defaults to true in CreateCluster; a false is never sent.
    state["isEnterpriseSecurityGroup"] = not inputs.get("securityGroupId")
    state["vpcId"] = f"vpc-{digest('vpc-of', cluster_id, length=21)}"
    # SnatEntry defaults to true and a false `newNatGateway` is never sent: ACK always makes
    # one NAT gateway (the provider reads back the VPC's first).
    state["natGatewayId"] = f"ngw-{digest('ack-nat', cluster_id, length=21)}"
    state["slbId"] = f"lb-{digest('ack-slb', cluster_id, length=21)}"
    state["slbIntranet"] = "10.0.0.200"
    # EndpointPublicAccess defaults to false; only a true `slbInternetEnabled` is sent.
    public = _public_address(cluster_id) if inputs.get("slbInternetEnabled") else ""
    state["slbInternet"] = public
    state["connections"] = [
        {
            "apiServerIntranet": "https://10.0.0.200:6443",
            "apiServerInternet": f"https://{public}:6443" if public else "",
            "masterPublicIp": public,
            "serviceDomain": f"*.{cluster_id}.{region}.alicontainer.com",
        }
    ]
    state["workerRamRoleName"] = f"KubernetesWorkerRole-{digest('role', cluster_id, length=12)}"
    state["clusterSpec"] = inputs.get("clusterSpec", "ack.standard")


def _node_pool(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    pool_id = "np" + digest("np", name, length=32)
    state["nodePoolId"] = pool_id
    state["id"] = f"{inputs.get('clusterId', '')}:{pool_id}"
    state["scalingGroupId"] = f"asg-{digest('asg', name, length=20)}"


def _nat_gateway(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["snatTableIds"] = f"stb-{digest('stb', name, length=21)}"
    state["forwardTableIds"] = f"ftb-{digest('ftb', name, length=21)}"
    state["status"] = "Available"


def _eip(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    octets = bytes.fromhex(digest("eip", name, length=4))
    state["ipAddress"] = f"198.51.{octets[0]}.{octets[1]}"  # TEST-NET-2, never routable
    state["status"] = "InUse"


def _eip_association(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    state["id"] = f"{inputs.get('allocationId')}:{inputs.get('instanceId')}"


def _snat_entry(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    entry = f"snat-{digest('snat', name, length=21)}"
    state["snatEntryId"] = entry
    state["id"] = f"{inputs.get('snatTableId')}:{entry}"


def _kms_key(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    key_id = "-".join(digest("kms", name, str(i), length=n) for i, n in enumerate((8, 4, 4, 4, 12)))
    state["id"] = key_id
    state["arn"] = f"acs:kms:{region}:{ACCOUNT_UID}:key/{key_id}"
    state["status"] = "Enabled"


def _oss_bucket(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    """An unnamed bucket gets the provider's `tf-oss-bucket-<timestamp><counter>`
    (resource_alicloud_oss_bucket.go:502, the Terraform SDK's PrefixedUniqueId: an
    18-digit UTC timestamp and an 8-hex-digit counter), not a name derived from the resource."""
    stamp = str(int(digest("oss-bucket-time", name, length=15), 16))[-18:].rjust(18, "2")
    bucket = state.get("bucket") or f"tf-oss-bucket-{stamp}00000001"
    state["bucket"] = bucket
    state["id"] = bucket
    state["location"] = f"oss-{region}"
    state["extranetEndpoint"] = f"oss-{region}.aliyuncs.com"
    state["intranetEndpoint"] = f"oss-{region}-internal.aliyuncs.com"
    state["owner"] = ACCOUNT_UID


def _by_bucket(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = inputs.get("bucket")


def _ram_role(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    role = state.setdefault("roleName", autoname("ram-role", name))
    state["id"] = role
    state["arn"] = f"acs:ram::{ACCOUNT_UID}:role/{role.lower()}"
    state["roleId"] = digest("ram-role", role, length=19)


def _ram_policy(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    policy = state.setdefault("policyName", autoname("ram-policy", name))
    state["id"] = policy
    state["defaultVersion"] = "v1"


def _ecs_instance(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    octets = bytes.fromhex(digest("ecs", name, length=8))
    state["privateIp"] = f"10.0.{octets[0]}.{octets[1] or 1}"
    has_public = int(inputs.get("internetMaxBandwidthOut") or 0) > 0
    state["publicIp"] = f"198.51.{octets[2]}.{octets[3] or 1}" if has_public else ""
    state["status"] = "Running"


_ID_PREFIX = {
    "alicloud:ecs/instance:Instance": "i",
    "alicloud:vpc/network:Network": "vpc",
    "alicloud:vpc/switch:Switch": "vsw",
    "alicloud:vpc/natGateway:NatGateway": "ngw",
    "alicloud:ecs/eipAddress:EipAddress": "eip",
    "alicloud:ecs/securityGroup:SecurityGroup": "sg",
    "alicloud:ecs/securityGroupRule:SecurityGroupRule": "sgr",
}

_RESOURCES: dict[str, ResourceHandler] = {
    "alicloud:cs/managedKubernetes:ManagedKubernetes": _managed_kubernetes,
    "alicloud:cs/nodePool:NodePool": _node_pool,
    "alicloud:vpc/natGateway:NatGateway": _nat_gateway,
    "alicloud:ecs/eipAddress:EipAddress": _eip,
    "alicloud:ecs/eipAssociation:EipAssociation": _eip_association,
    "alicloud:vpc/snatEntry:SnatEntry": _snat_entry,
    "alicloud:kms/key:Key": _kms_key,
    "alicloud:oss/bucket:Bucket": _oss_bucket,
    "alicloud:oss/bucketAcl:BucketAcl": _by_bucket,
    "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock": _by_bucket,
    "alicloud:ram/role:Role": _ram_role,
    "alicloud:ram/policy:Policy": _ram_policy,
    "alicloud:ecs/instance:Instance": _ecs_instance,
}


# ---------------------------------------------------------------------------
# lookups


def _zones(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """Three zones sell the asked-for instance type (as for gn7i in most mainland regions)."""
    instance_type = args.get("availableInstanceType")
    ids = [f"{region}-{letter}" for letter in "hij"]
    return {
        "id": digest("zones", region, str(instance_type), length=10),
        "ids": ids,
        "zones": [
            {
                "id": zone,
                "localName": zone,
                "availableInstanceTypes": [instance_type] if instance_type else [],
                "availableResourceCreations": ["VSwitch", "Instance", "Disk"],
                "availableDiskCategories": ["cloud_essd", "cloud_auto"],
                "multiZoneIds": [],
                "slbSlaveZoneIds": [],
            }
            for zone in ids
        ],
        "availableInstanceType": instance_type,
        "availableResourceCreation": args.get("availableResourceCreation"),
    }


def _kubernetes_versions(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": digest("ack-versions", region, length=10),
        "clusterType": args.get("clusterType"),
        "profile": args.get("profile"),
        "metadatas": [
            {"version": v, "runtimes": [{"name": "containerd", "version": "1.6.38"}]}
            for v in ACK_VERSIONS
        ],
    }


def _cluster_credential(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """The Internet kubeconfig: the provider always asks DescribeClusterUserKubeconfig with
    PrivateIpAddress false (service_alicloud_cs.go:243), whatever endpoint the cluster has."""
    cluster_id = str(args.get("clusterId") or "")
    user = f"{ACCOUNT_UID}-{cluster_id}"
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kubernetes",
                "cluster": {
                    "server": f"https://{_public_address(cluster_id)}:6443",
                    "certificate-authority-data": FAKE_CA,
                },
            }
        ],
        "users": [
            {
                "name": user,
                "user": {"client-certificate-data": FAKE_CA, "client-key-data": FAKE_CA},
            }
        ],
        "contexts": [{"name": user, "context": {"cluster": "kubernetes", "user": user}}],
        "current-context": user,
    }
    return {
        "id": cluster_id,
        "clusterId": cluster_id,
        "clusterName": cluster_id,
        "kubeConfig": yaml.safe_dump(kubeconfig, sort_keys=False),  # ACK returns YAML
        "expiration": "2029-11-30T00:00:00Z",
        "certificateAuthorities": [
            {"clusterCert": FAKE_CA, "clientCert": FAKE_CA, "clientKey": FAKE_CA}
        ],
    }


def _caller_identity(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": ACCOUNT_UID,
        "accountId": ACCOUNT_UID,
        "arn": f"acs:ram::{ACCOUNT_UID}:root",
        "identityType": "Account",
    }


PUBLIC_IMAGES = (
    # (name, system disk GiB), newest first as `most_recent` sorts them.
    ("ubuntu_22_04_x64_20G_alibase_20260915.vhd", 20),
    ("ubuntu_22_04_x64_100G_with_gpu_driver_and_cuda_alibase_20260520.vhd", 100),
    ("ubuntu_22_04_x64_20G_alibase_20260610.vhd", 20),
)
"""Public (owners=system) images the mock region holds, named as Alibaba names them."""


def _images(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """`ecs.get_images`: the public images whose name matches `name_regex` (the provider uses
    Go's regexp.MatchString, a search), newest first; only the newest with `most_recent`."""
    pattern = re.compile(str(args.get("nameRegex") or ""))
    found = [(n, size) for n, size in PUBLIC_IMAGES if pattern.search(n)]
    if args.get("mostRecent"):
        found = found[:1]
    images = [
        {
            "id": name.removesuffix(".vhd"),
            "imageId": name.removesuffix(".vhd"),
            "name": name,
            "osName": "Ubuntu  22.04 64位",
            "osNameEn": "Ubuntu  22.04 64 bit",
            "osType": "linux",
            "platform": "Ubuntu",
            "architecture": "x86_64",
            "imageOwnerAlias": "system",
            "status": "Available",
            "size": size,
        }
        for name, size in found
    ]
    return {
        "id": digest("images", str(args.get("nameRegex")), region),
        "ids": [i["id"] for i in images],
        "names": [i["name"] for i in images],
        "images": images,
        "owners": args.get("owners"),
        "nameRegex": args.get("nameRegex"),
        "mostRecent": args.get("mostRecent"),
    }


_CALLS: dict[str, CallHandler] = {
    "alicloud:ecs/getImages:getImages": _images,
    "alicloud:index/getZones:getZones": _zones,
    "alicloud:cs/getKubernetesVersion:getKubernetesVersion": _kubernetes_versions,
    "alicloud:cs/getClusterCredential:getClusterCredential": _cluster_credential,
    "alicloud:index/getCallerIdentity:getCallerIdentity": _caller_identity,
}

MOCKS = CloudMocks(resources=_RESOURCES, id_prefixes=_ID_PREFIX, calls=_CALLS)
