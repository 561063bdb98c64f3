"""Volcano Engine (pulumi-volcenginecc): outputs of the resources the Volcano Engine stack uses.

Each resource answers with the read-only properties its Cloud Control schema lists
(volcengine/terraform-provider-volcenginecc@v0.0.53
internal/service/cloudcontrol/schemas/Volcengine_*.json, `readOnlyProperties`), with ids shaped
as Volcano Engine shows them (`vpc-...`, `subnet-...`, `ngw-...`, `eip-...`, `sg-...`,
`vtb-...`); the Pulumi id of a resource is its primary identifier (`primaryIdentifier`; joined
with `|` where there are two). The account is made up.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from .common import FAKE_CA, CloudMocks, ResourceHandler, digest

ACCOUNT_ID = "2100000001"
_T = "volcenginecc:"


def _short(prefix: str, name: str, length: int = 20) -> str:
    return f"{prefix}-{digest(prefix, name, length=length)}"


def _prefixed(prefix: str, output: str) -> ResourceHandler:
    def handler(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
        resource_id = _short(prefix, name)
        state[output] = resource_id
        state["id"] = resource_id

    return handler


def _vpc(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    _prefixed("vpc", "vpcId")(name, inputs, state, region)
    state["status"] = "Available"
    state["accountId"] = ACCOUNT_ID
    state["isDefault"] = False


def _subnet(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    _prefixed("subnet", "subnetId")(name, inputs, state, region)
    state["status"] = "Available"
    state["availableIpAddressCount"] = 8189


def _eip(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    _prefixed("eip", "allocationId")(name, inputs, state, region)
    octets = bytes.fromhex(digest("eip", name, length=4))
    state["eipAddress"] = f"198.51.{octets[0]}.{octets[1] or 1}"  # TEST-NET-2, never routable
    state["status"] = "Attached" if inputs.get("instanceId") else "Available"


def _snat(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    _prefixed("snat", "snatEntryId")(name, inputs, state, region)
    state["status"] = "Available"


def _cluster(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    cluster_id = "cc" + digest("cluster", name, length=18)
    state["clusterId"] = cluster_id
    state["id"] = cluster_id
    state["kubernetesVersion"] = f"v{inputs.get('kubernetesVersionCreate', '1.32')}.0-vke.1"
    state["status"] = {"phase": "Running", "conditions": [{"type": "Ok"}]}
    enabled = bool((inputs.get("irsaConfig") or {}).get("enabled"))
    # Issuer shape as VKE's IRSA guide shows it (docs 6460/1324613): a TOS-hosted discovery
    # document per cluster.
    issuer = f"https://oidc-vke-{region}.tos-{region}.volces.com/{cluster_id}"
    state["irsaConfig"] = {
        "enabled": enabled,
        "audience": "sts.volcengine.com" if enabled else "",
        "issuer": issuer if enabled else "",
        "jwksUrl": f"{issuer}/openid/v1/jwks" if enabled else "",
        "oidcTrn": f"trn:iam::{ACCOUNT_ID}:oidc-provider/{cluster_id}" if enabled else "",
        "openIdConfigUrl": f"{issuer}/.well-known/openid-configuration" if enabled else "",
    }
    octets = bytes.fromhex(digest("apiserver", name, length=4))
    state["clusterConfig"] = {
        **dict(inputs.get("clusterConfig") or {}),
        "apiServerEndpoints": {"privateIp": {"ipv4": f"10.0.{octets[0] % 32}.{octets[1] or 1}"}},
        "securityGroupIds": [_short("sg", f"{name}-control-plane")],
    }


def _kubeconfig_yaml(cluster_id: str, server: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster_id,
                    "cluster": {"server": server, "certificate-authority-data": FAKE_CA},
                }
            ],
            "users": [
                {
                    "name": f"{ACCOUNT_ID}-{cluster_id}",
                    "user": {
                        "client-certificate-data": FAKE_CA,
                        "client-key-data": "b2ZmbGluZS1wcmV2aWV3LW5vdC1hLXJlYWwta2V5",
                    },
                }
            ],
            "contexts": [
                {
                    "name": f"{cluster_id}@{ACCOUNT_ID}",
                    "context": {"cluster": cluster_id, "user": f"{ACCOUNT_ID}-{cluster_id}"},
                }
            ],
            "current-context": f"{cluster_id}@{ACCOUNT_ID}",
        },
        indent=2,
    )


def _kubeconfig(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    cluster_id = str(inputs.get("clusterId", ""))
    kubeconfig_id = "kce" + digest("kubeconfig", name, length=17)
    state["kubeconfigId"] = kubeconfig_id
    state["id"] = f"{cluster_id}|{kubeconfig_id}"
    octets = bytes.fromhex(digest("apiserver", cluster_id, length=4))
    server = f"https://10.0.{octets[0] % 32}.{octets[1] or 1}:6443"
    # ListKubeconfigs returns the document Base64-encoded.
    state["kubeconfig"] = base64.b64encode(_kubeconfig_yaml(cluster_id, server).encode()).decode()
    state["userId"] = 1
    state["createTime"] = "2026-11-30T00:00:00Z"
    state["expireTime"] = "2027-11-30T00:00:00Z"


def _node_pool(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    pool_id = "pc" + digest("nodepool", name, length=18)
    state["nodePoolId"] = pool_id
    state["id"] = f"{inputs.get('clusterId', '')}|{pool_id}"
    state["status"] = {"phase": "Running", "conditions": [{"type": "Ok"}]}
    desired = (inputs.get("autoScaling") or {}).get("desiredReplicas", 0)
    state["nodeStatistics"] = {"totalCount": desired, "runningCount": desired}


def _addon(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = f"{inputs.get('clusterId', '')}|{inputs.get('name', name)}"
    state["status"] = {"phase": "Running"}
    state["version"] = "v1.0.0-vke.1"


def _bucket(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    bucket = str(inputs.get("name", name))
    state["id"] = bucket
    state["location"] = region
    state["extranetEndpoint"] = f"tos-{region}.volces.com"
    state["intranetEndpoint"] = f"tos-{region}.ivolces.com"
    state["creationDate"] = "2026-11-30T00:00:00Z"


def _bucket_encryption(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    state["id"] = str(inputs.get("name", ""))


def _policy(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    policy_name = str(inputs.get("policyName", name))
    state["id"] = f"{policy_name}|{inputs.get('policyType', 'Custom')}"
    state["policyTrn"] = f"trn:iam::{ACCOUNT_ID}:policy/{policy_name}"
    state["attachmentCount"] = 0


def _role(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    role_name = str(inputs.get("roleName", name))
    state["id"] = role_name
    state["trn"] = f"trn:iam::{ACCOUNT_ID}:role/{role_name}"
    state["roleId"] = int(digest("role", role_name, length=6), 16)


_RESOURCES: dict[str, ResourceHandler] = {
    _T + "vpc/vpc:Vpc": _vpc,
    _T + "vpc/subnet:Subnet": _subnet,
    _T + "vpc/routeTable:RouteTable": _prefixed("vtb", "routeTableId"),
    _T + "vpc/eip:Eip": _eip,
    _T + "vpc/securityGroup:SecurityGroup": _prefixed("sg", "securityGroupId"),
    _T + "natgateway/ngw:Ngw": _prefixed("ngw", "natGatewayId"),
    _T + "natgateway/snatentry:Snatentry": _snat,
    _T + "vke/cluster:Cluster": _cluster,
    _T + "vke/kubeconfig:Kubeconfig": _kubeconfig,
    _T + "vke/nodePool:NodePool": _node_pool,
    _T + "vke/addon:Addon": _addon,
    _T + "tos/bucket:Bucket": _bucket,
    _T + "tos/bucketEncryption:BucketEncryption": _bucket_encryption,
    _T + "iam/policy:Policy": _policy,
    _T + "iam/role:Role": _role,
}

MOCKS = CloudMocks(resources=_RESOURCES)
