"""Tencent Cloud: outputs of the resources and lookups the Tencent Cloud stack uses.

Ids follow what terraform-provider-tencentcloud@v1.82.42 stores (`d.SetId`): `vpc-` plus 8
characters, `cls-...`, node pools `<cluster id>#np-...`
(services/tke/resource_tc_kubernetes_node_pool.go:785), a rule set, endpoint, auth
attachment or encryption protection takes the id of what it configures
(resource_tc_security_group_rule_set.go:161, resource_tc_kubernetes_encryption_protection.go:
116), route entries `<entry>.<table>` (resource_tc_route_table_entry.go:135), role policy
attachments `<role>#<policy>` (resource_tc_cam_role_policy_attachment.go:95). The account is a
made-up UIN and APPID.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .common import FAKE_CA, CallHandler, CloudMocks, ResourceHandler, digest

OWNER_UIN = "100000000001"
APP_ID = "1250000000"

_T = "tencentcloud:"


def _short_id(prefix: str, type_: str, name: str) -> str:
    return f"{prefix}-{digest(type_, name, length=8)}"


# ---------------------------------------------------------------------------
# resources


def _kubeconfig(cluster_id: str, server: str) -> str:
    """What TKE hands out: a client-certificate kubeconfig for the cluster admin."""
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
                    "name": OWNER_UIN,
                    "user": {
                        "client-certificate-data": FAKE_CA,
                        "client-key-data": "b2ZmbGluZS1wcmV2aWV3LW5vdC1hLXJlYWwta2V5",
                    },
                }
            ],
            "contexts": [
                {
                    "name": f"{cluster_id}-context-default",
                    "context": {"cluster": cluster_id, "user": OWNER_UIN},
                }
            ],
            "current-context": f"{cluster_id}-context-default",
        },
        indent=2,
    )


def _cluster(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    cluster_id = _short_id("cls", "cluster", name)
    state["id"] = cluster_id
    state["domain"] = f"{cluster_id}.ccs.tencent-cloud.com"
    state["certificationAuthority"] = FAKE_CA
    state["userName"] = "admin"
    state["password"] = ""
    state["clusterNodeNum"] = 0
    state["clusterAsEnabled"] = False
    # Read reports the endpoints as TKE has them: closed until a ClusterEndpoint opens them
    # (resource_tc_kubernetes_cluster_extension.go:2353-2357).
    state["clusterInternet"] = False
    state["clusterIntranet"] = False
    state["kubeConfig"] = ""
    state["kubeConfigIntranet"] = ""


def _cluster_endpoint(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    cluster_id = str(inputs.get("clusterId", ""))
    state["id"] = cluster_id  # resource_tc_kubernetes_cluster_endpoint.go:286
    octets = bytes.fromhex(digest("endpoint", name, length=4))
    private = f"https://10.0.{octets[0] % 32}.{octets[1] or 1}"
    public = f"https://{cluster_id}.ccs.tencent-cloud.com"
    state["pgwEndpoint"] = private
    state["clusterExternalEndpoint"] = public if inputs.get("clusterInternet") else ""
    state["domain"] = f"{cluster_id}.ccs.tencent-cloud.com"
    state["certificationAuthority"] = FAKE_CA
    state["userName"] = "admin"
    state["password"] = ""
    state["clusterDeployType"] = "MANAGED_CLUSTER"
    state["kubeConfigIntranet"] = _kubeconfig(cluster_id, private)
    state["kubeConfig"] = _kubeconfig(cluster_id, public) if inputs.get("clusterInternet") else ""


def _node_pool(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = f"{inputs.get('clusterId', 'cls-unknown')}#{_short_id('np', 'np', name)}"
    state["autoScalingGroupId"] = f"asg-{digest('asg', name, length=8)}"
    state["launchConfigId"] = f"asc-{digest('asc', name, length=8)}"
    state["status"] = "normal"
    state["nodeCount"] = inputs.get("desiredCapacity", 0)
    state["autoscalingAddedTotal"] = inputs.get("desiredCapacity", 0)
    state["manuallyAddedTotal"] = 0


def _auth_attachment(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    cluster_id = str(inputs.get("clusterId", ""))
    state["id"] = cluster_id
    # Illustrative issuer: TKE's default issuer is a Tencent-hosted HTTPS URL per cluster.
    state["tkeDefaultIssuer"] = f"https://{region}-oidc.tke.tencentcs.com/id/{cluster_id}"
    state["tkeDefaultJwksUri"] = state["tkeDefaultIssuer"] + "/openid/v1/jwks"


def _kms_key(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = "-".join(
        digest("kms", name, str(i), length=n) for i, n in enumerate((8, 4, 4, 4, 12))
    )
    # Create disables the key unless `is_enabled` (services/kms/resource_tc_kms_key.go:149).
    state["keyState"] = "Enabled" if inputs.get("isEnabled") else "Disabled"


def _eip(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    octets = bytes.fromhex(digest("eip", name, length=4))
    state["id"] = _short_id("eip", "eip", name)
    state["publicIp"] = f"198.51.{octets[0]}.{octets[1]}"  # TEST-NET-2, never routable
    state["status"] = "UNBIND"


def _cos_bucket(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    bucket = str(inputs.get("bucket", ""))
    state["id"] = bucket
    state["cosBucketUrl"] = f"{bucket}.cos.{region}.myqcloud.com"


def _cam_role(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    role = str(inputs.get("name", name))
    state["id"] = str(4611686018427387904 + int(digest("role", role, length=8), 16))
    state["roleArn"] = f"qcs::cam::uin/{OWNER_UIN}:roleName/{role}"


def _cam_policy(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = str(200000000 + int(digest("policy", name, length=6), 16))


def _key_pair(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = _short_id("skey", "skey", name)
    state["createdTime"] = "2026-11-30T00:00:00Z"
    if not inputs.get("publicKey"):
        # CreateKeyPair: CVM generates the pair and returns the private key once
        # (services/cvm/resource_tc_key_pair.go:159-171).
        state["publicKey"] = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAB" + digest("pub", name, length=16)
        state["privateKey"] = (
            "-----BEGIN RSA PRIVATE KEY-----\noffline-preview-not-a-real-key\n"
            "-----END RSA PRIVATE KEY-----\n"
        )


def _rule_set(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = str(inputs.get("securityGroupId", ""))
    state["version"] = "1"


def _route_entry(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = f"{int(digest('entry', name, length=4), 16)}.{inputs.get('routeTableId', '')}"


def _role_policy_attachment(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    state["id"] = f"{inputs.get('roleId', '')}#{inputs.get('policyId', '')}"
    state["policyType"] = "User"
    state["createMode"] = 2


def _encryption_protection(
    name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str
) -> None:
    state["id"] = str(inputs.get("clusterId", ""))
    state["status"] = "Opened"


def _subnet(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = _short_id("subnet", "subnet", name)
    state["isDefault"] = False
    state["availableIpCount"] = 8187


def _prefixed(prefix: str) -> ResourceHandler:
    """Tencent ids: a prefix and 8 characters, e.g. `vpc-2x7k9q1m`."""

    def handler(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
        state["id"] = _short_id(prefix, prefix, name)

    return handler


def _cvm_instance(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    state["id"] = _short_id("ins", "ins", name)
    octets = bytes.fromhex(digest("cvm", name, length=8))
    state["privateIp"] = f"10.0.{octets[0]}.{octets[1] or 1}"
    state["publicIp"] = (
        f"198.51.{octets[2]}.{octets[3] or 1}" if inputs.get("allocatePublicIp") else ""
    )
    state["instanceStatus"] = "RUNNING"


_RESOURCES: dict[str, ResourceHandler] = {
    _T + "Instance/instance:Instance": _cvm_instance,
    _T + "Key/pair:Pair": _key_pair,
    _T + "Vpc/instance:Instance": _prefixed("vpc"),
    _T + "Subnet/instance:Instance": _subnet,
    _T + "Nat/gateway:Gateway": _prefixed("nat"),
    _T + "Route/table:Table": _prefixed("rtb"),
    _T + "Route/tableEntry:TableEntry": _route_entry,
    _T + "Security/group:Group": _prefixed("sg"),
    _T + "Security/groupRuleSet:GroupRuleSet": _rule_set,
    _T + "Kubernetes/encryptionProtection:EncryptionProtection": _encryption_protection,
    _T + "Cam/rolePolicyAttachment:RolePolicyAttachment": _role_policy_attachment,
    _T + "Kubernetes/cluster:Cluster": _cluster,
    _T + "Kubernetes/clusterEndpoint:ClusterEndpoint": _cluster_endpoint,
    _T + "Kubernetes/nodePool:NodePool": _node_pool,
    _T + "Kubernetes/authAttachment:AuthAttachment": _auth_attachment,
    _T + "Kms/key:Key": _kms_key,
    _T + "Eip/instance:Instance": _eip,
    _T + "Cos/bucket:Bucket": _cos_bucket,
    _T + "Cam/role:Role": _cam_role,
    _T + "Cam/policy:Policy": _cam_policy,
}


# ---------------------------------------------------------------------------
# lookups

# GPU families and their sizes on sale in the mocked zones (sizes as in the catalog).
_SIZES: dict[str, tuple[str, ...]] = {
    "GN7": ("2XLARGE32", "5XLARGE80", "8XLARGE128", "10XLARGE160", "20XLARGE320"),
    "GN7vi": ("5XLARGE80", "10XLARGE160", "20XLARGE320"),
    "GN10Xp": ("2XLARGE40", "5XLARGE80", "10XLARGE160", "20XLARGE320"),
    "GT4": ("4XLARGE96", "8XLARGE192", "20XLARGE474", "41XLARGE948"),
    "PNV4": ("7XLARGE116", "14XLARGE232", "28XLARGE466", "56XLARGE932"),
}
# Zone numbers that sell GPUs, per region (enough for 2 to 4 subnets).
_ZONE_NUMBERS: dict[str, tuple[int, ...]] = {
    "ap-guangzhou": (3, 4, 6, 7),
    "ap-shanghai": (2, 3, 4, 5),
    "ap-beijing": (5, 6, 7, 8),
}


def _filter_values(args: Mapping[str, Any], name: str) -> list[str]:
    for item in args.get("filters") or []:
        if item.get("name") == name:
            return [str(v) for v in item.get("values") or []]
    return []


def _instance_types(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """DescribeZoneInstanceConfigInfos as `instance.get_types` returns it: every zone that
    offers the type, each with its stock (`SELL` or `SOLD_OUT`); `exclude_sold_out` drops the
    sold-out ones. Here spot GPUs are sold out in each region's first GPU zone, as happens."""
    families = _filter_values(args, "instance-family") or list(_SIZES)
    charge = (_filter_values(args, "instance-charge-type") or ["POSTPAID_BY_HOUR"])[0]
    zones = [f"{region}-{n}" for n in _ZONE_NUMBERS.get(region, (1, 2, 3, 4))]

    def status(zone: str) -> str:
        return "SOLD_OUT" if charge == "SPOTPAID" and zone == zones[0] else "SELL"

    offers = [
        {
            "availabilityZone": zone,
            "family": family,
            "instanceType": f"{family}.{size}",
            "instanceChargeType": charge,
            "status": status(zone),
            "cpuCoreCount": 0,
            "gpuCoreCount": 0,
            "memorySize": 0,
            "cbsConfigs": [],
        }
        for family in families
        for size in _SIZES.get(family, ())
        for zone in zones
        if not (args.get("excludeSoldOut") and status(zone) == "SOLD_OUT")
    ]
    return {"id": digest("types", *families, charge), "instanceTypes": offers}


def _user_info(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    return {
        "id": OWNER_UIN,
        "appId": APP_ID,
        "uin": OWNER_UIN,
        "ownerUin": OWNER_UIN,
        "name": "offline-preview",
    }


def _images(args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """Public images as `images.get_instance(image_types=["PUBLIC_IMAGE"], ...)` lists them."""
    image = {
        "imageId": "img-" + digest("image", "ubuntu-22.04", length=8),
        "imageName": "Ubuntu Server 22.04 LTS 64bit",
        "imageType": "PUBLIC_IMAGE",
        "osName": "Ubuntu Server 22.04 LTS 64bit",
        "platform": "Ubuntu",
        "architecture": "x86_64",
        "imageSize": 20,
        "imageCreator": "",
        "imageDescription": "",
        "imageSource": "OFFICIAL",
        "createdTime": "2026-09-15T00:00:00Z",
        "snapshots": [],
        "syncPercent": 100,
        "supportCloudInit": True,
        "imageState": "NORMAL",
    }
    return {"id": digest("images", str(args.get("imageNameRegex")), region), "images": [image]}


_CALLS: dict[str, CallHandler] = {
    _T + "Images/getInstance:getInstance": _images,
    _T + "Instance/getTypes:getTypes": _instance_types,
    _T + "User/getInfo:getInfo": _user_info,
}

MOCKS = CloudMocks(resources=_RESOURCES, calls=_CALLS)
