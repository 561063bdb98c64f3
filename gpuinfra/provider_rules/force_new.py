"""Per resource type, the inputs whose change makes the provider replace the resource.

The plan diff (`gpuinfra.diff`) marks a changed resource "replace" when one of these inputs
changed, and "blocked" when the resource is `protect`ed: Pulumi refuses to delete a
protected resource, so such a `pulumi up` stops. Paths are the engine's (camelCase) input
paths as the diff flattens them: `a.b` for nested objects, `a[*].b` for any element of a
list; a change at or below a listed path forces replacement.

Sources, each at the version the Pulumi SDK here bridges:
- Terraform-bridged providers (aws, alicloud, tencentcloud): the provider schema's
  `ForceNew: true` fields (the bridge turns them into replacements). Numbers are the lines
  of the `ForceNew` in that file; for AWS, whose repository is too large to fetch here, the
  schema attribute name in a stored copy (commit given) is cited instead.
- pulumi-kubernetes: `forceNewProperties` (provider/pkg/provider/diff.go) and the Helm
  release's `.name`/`.namespace` (provider/pkg/provider/helm_release.go:907).
A type missing here is not known to replace on any input change: the diff says so rather
than guessing (`ForceNewTable.covers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ForceNew:
    """The replace-forcing inputs of one resource type, with where each is declared."""

    source: str
    fields: Mapping[str, int | str]
    """Input path -> line of its `ForceNew` in `source` (or the Terraform attribute name)."""
    conditional: tuple[Callable[[Mapping[str, Any], Mapping[str, Any]], str | None], ...] = ()
    """Replacements that depend on the values (old inputs, new inputs) -> reason or None."""
    notes: str = ""

    def forced_by(self, path: str) -> str | None:
        """The listed field that makes a change at `path` a replacement, or None."""
        generic = re.sub(r"\[\d+\]", "[*]", path)
        for name in self.fields:
            if generic == name or generic.startswith((name + ".", name + "[")):
                return name
        return None


def _fields(source: str, fields: Mapping[str, int | str], **kw: Any) -> ForceNew:
    return ForceNew(source=source, fields=dict(fields), **kw)


_AWS = "hashicorp/terraform-provider-aws"
_ALI = "aliyun/terraform-provider-alicloud@v1.285.0 alicloud/"
_TC = "tencentcloudstack/terraform-provider-tencentcloud@v1.82.42 tencentcloud/services/"


def _eks_encryption_removed(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    if old.get("encryptionConfig") and not new.get("encryptionConfig"):
        return "encryptionConfig removed (envelope encryption cannot be turned off in place)"
    return None


def _user_data_replaced(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    if new.get("userDataReplaceOnChange") is not True:
        return None
    for key in ("userData", "userDataBase64"):
        if old.get(key) != new.get(key):
            return f"{key} changed and userDataReplaceOnChange is true"
    return None


_RULE_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")


def _rule_source_kind(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    def kind(i: Mapping[str, Any]) -> str | None:
        return next((k for k in _RULE_SOURCES if i.get(k)), None)

    if kind(old) != kind(new):
        return f"rule source changed from {kind(old)} to {kind(new)}"
    return None


FORCE_NEW: dict[str, ForceNew] = {
    # --- AWS ---------------------------------------------------------------------------
    "aws:eks/nodeGroup:NodeGroup": _fields(
        f"{_AWS}@012e0a32 internal/service/eks/node_group.go",
        {
            "amiType": "ami_type",
            "capacityType": "capacity_type",
            "clusterName": "cluster_name",
            "diskSize": "disk_size",
            "instanceTypes": "instance_types",
            "launchTemplate.id": "launch_template.id",
            "launchTemplate.name": "launch_template.name",
            "nodeGroupName": "node_group_name",
            "nodeGroupNamePrefix": "node_group_name_prefix",
            "nodeRoleArn": "node_role_arn",
            "remoteAccess": "remote_access",
            "subnetIds": "subnet_ids",
        },
    ),
    "aws:eks/cluster:Cluster": _fields(
        f"{_AWS}@00555dc5 internal/service/eks/cluster.go",
        {
            "accessConfig.bootstrapClusterCreatorAdminPermissions": (
                "access_config.bootstrap_cluster_creator_admin_permissions"
            ),
            "bootstrapSelfManagedAddons": "bootstrap_self_managed_addons",
            "kubernetesNetworkConfig.ipFamily": "kubernetes_network_config.ip_family",
            "kubernetesNetworkConfig.serviceIpv4Cidr": (
                "kubernetes_network_config.service_ipv4_cidr"
            ),
            "name": "name",
            "outpostConfig.controlPlaneInstanceType": "outpost_config.control_plane_instance_type",
            "remoteNetworkConfig": "remote_network_config",
            "roleArn": "role_arn",
        },
        conditional=(_eks_encryption_removed,),
        notes="CustomizeDiff: ForceNewIfChange(encryption_config) when it is removed.",
    ),
    "aws:ec2/instance:Instance": _fields(
        f"{_AWS}@0015dfcd internal/service/ec2/ec2_instance.go",
        {
            "ami": "ami",
            "associatePublicIpAddress": "associate_public_ip_address",
            "availabilityZone": "availability_zone",
            "cpuOptions.amdSevSnp": "cpu_options.amd_sev_snp",
            "cpuOptions.coreCount": "cpu_options.core_count",
            "cpuOptions.threadsPerCore": "cpu_options.threads_per_core",
            "ebsBlockDevices": "ebs_block_device (every attribute but tags)",
            "ebsOptimized": "ebs_optimized",
            "enclaveOptions.enabled": "enclave_options.enabled",
            "ephemeralBlockDevices": "ephemeral_block_device",
            "hibernation": "hibernation",
            "hostId": "host_id",
            "ipv6AddressCount": "ipv6_address_count",
            "ipv6Addresses": "ipv6_addresses",
            "keyName": "key_name",
            "launchTemplate": "launch_template",
            "networkInterfaces": "network_interface (every attribute)",
            "placementGroup": "placement_group",
            "placementPartitionNumber": "placement_partition_number",
            "privateDnsNameOptions": "private_dns_name_options",
            "privateIp": "private_ip",
            "rootBlockDevice.encrypted": "root_block_device.encrypted",
            "rootBlockDevice.kmsKeyId": "root_block_device.kms_key_id",
            "securityGroups": "security_groups",
            "subnetId": "subnet_id",
            "tenancy": "tenancy",
        },
        conditional=(_user_data_replaced,),
        notes="CustomizeDiff: ForceNewIf(user_data) when user_data_replace_on_change is true.",
    ),
    "aws:s3/bucket:Bucket": _fields(
        f"{_AWS}@0070bcd1 internal/service/s3/bucket.go",
        {"bucket": "bucket", "bucketPrefix": "bucket_prefix"},
    ),
    "aws:ec2/subnet:Subnet": _fields(
        f"{_AWS}@00cda125 internal/service/ec2/vpc_subnet.go",
        {
            "availabilityZone": "availability_zone",
            "availabilityZoneId": "availability_zone_id",
            "cidrBlock": "cidr_block",
            "ipv4IpamPoolId": "ipv4_ipam_pool_id",
            "ipv4NetmaskLength": "ipv4_netmask_length",
            "ipv6IpamPoolId": "ipv6_ipam_pool_id",
            "ipv6Native": "ipv6_native",
            "ipv6NetmaskLength": "ipv6_netmask_length",
            "outpostArn": "outpost_arn",
            "vpcId": "vpc_id",
        },
    ),
    "aws:ec2/vpc:Vpc": _fields(
        f"{_AWS}@00081ce4 internal/service/ec2/vpc_.go",
        {
            "cidrBlock": "cidr_block",
            "ipv4IpamPoolId": "ipv4_ipam_pool_id",
            "ipv4NetmaskLength": "ipv4_netmask_length",
        },
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": _fields(
        f"{_AWS}@00a32209 internal/service/ec2/vpc_security_group_ingress_rule.go",
        {"securityGroupId": "security_group_id (RequiresReplace)"},
        conditional=(_rule_source_kind,),
        notes="ModifyPlan: a change of the rule's source kind (CIDR, prefix list, group) "
        "requires replacement.",
    ),
    # --- Alibaba Cloud and Tencent Cloud (generated from the schema, see the docstring) -----
    "alicloud:cs/nodePool:NodePool": _fields(
        f"{_ALI}resource_alicloud_cs_kubernetes_node_pool.go",
        {
            "autoMode": 42,
            "autoMode.enabled": 49,
            "cisEnabled": 68,
            "clusterId": 74,
            "deploymentSetId": 156,
            "instanceMetadataOptions": 210,
            "instanceMetadataOptions.httpTokens": 217,
            "loginAsNonRoot": 495,
            "nodeNameMode": 602,
            "ramRoleName": 672,
            "securityGroupId": 783,
            "securityGroupIds": 790,
            "securityHardeningOs": 796,
            "socEnabled": 801,
            "teeConfig": 904,
            "teeConfig.teeEnable": 911,
            "type": 920,
        },
    ),
    "alicloud:cs/managedKubernetes:ManagedKubernetes": _fields(
        f"{_ALI}resource_alicloud_cs_managed_kubernetes.go",
        {
            "profile": 57,
            "podCidr": 238,
            "serviceCidr": 243,
            "nodeCidrMask": 248,
            "proxyMode": 320,
            "ipStack": 328,
            "clusterDomain": 403,
            "serviceAccountIssuer": 664,
            "apiAudiences": 672,
            "autoMode": 788,
            "autoMode.enabled": 794,
        },
    ),
    "alicloud:vpc/switch:Switch": _fields(
        f"{_ALI}resource_alicloud_vswitch.go",
        {"cidrBlock": 35, "isDefault": 64, "vpcId": 80, "zoneId": 92, "availabilityZone": 105},
    ),
    "alicloud:vpc/network:Network": _fields(
        f"{_ALI}resource_alicloud_vpc.go",
        {"ipv6CidrBlock": 77, "isDefault": 172, "userCidrs": 183},
    ),
    "alicloud:oss/bucket:Bucket": _fields(
        f"{_ALI}resource_alicloud_oss_bucket.go",
        {"bucket": 31, "storageClass": 377, "redundancyType": 390},
    ),
    "alicloud:ecs/instance:Instance": _fields(
        f"{_ALI}resource_alicloud_instance.go",
        {
            "availabilityZone": 38,
            "networkInterfaceId": 66,
            "systemDiskCategory": 138,
            "systemDiskStorageClusterId": 173,
            "systemDiskEncrypted": 178,
            "systemDiskKmsKeyId": 184,
            "systemDiskEncryptAlgorithm": 191,
            "networkInterfaceTrafficMode": 208,
            "networkCardIndex": 216,
            "queuePairNumber": 222,
            "sourceDestCheck": 228,
            "dataDisks[*].name": 240,
            "dataDisks[*].size": 246,
            "dataDisks[*].category": 253,
            "dataDisks[*].encrypted": 259,
            "dataDisks[*].snapshotId": 268,
            "dataDisks[*].autoSnapshotPolicyId": 273,
            "dataDisks[*].deleteWithInstance": 278,
            "dataDisks[*].description": 284,
            "dataDisks[*].device": 296,
            "dataDisks[*].provisionedIops": 301,
            "dataDisks[*].burstingEnabled": 306,
            "networkInterfaces.networkInterfaceId": 320,
            "networkInterfaces.vswitchId": 326,
            "networkInterfaces.networkInterfaceTrafficMode": 332,
            "networkInterfaces.networkCardIndex": 339,
            "networkInterfaces.queuePairNumber": 345,
            "networkInterfaces.sourceDestCheck": 351,
            "networkInterfaces.securityGroupIds": 357,
            "spotStrategy": 466,
            "spotPriceLimit": 473,
            "securityEnhancementStrategy": 492,
            "hpcClusterId": 519,
            "spotInterruptionBehavior": 599,
            "httpPutResponseHopLimit": 617,
            "ipv6AddressCount": 626,
            "dedicatedHostId": 661,
            "launchTemplateName": 667,
            "launchTemplateId": 672,
            "launchTemplateVersion": 677,
            "imageOptions.loginAsNonRoot": 718,
        },
    ),
    "alicloud:ecs/securityGroup:SecurityGroup": _fields(
        f"{_ALI}resource_alicloud_security_group.go",
        {"securityGroupType": 63, "vpcId": 71},
    ),
    "alicloud:ecs/securityGroupRule:SecurityGroupRule": _fields(
        f"{_ALI}resource_alicloud_security_group_rule.go",
        {
            "securityGroupId": 31,
            "type": 36,
            "ipProtocol": 43,
            "policy": 49,
            "priority": 56,
            "cidrIp": 63,
            "ipv6CidrIp": 69,
            "sourceSecurityGroupId": 79,
            "sourceGroupOwnerAccount": 85,
            "prefixListId": 91,
            "portRange": 97,
            "nicType": 104,
        },
    ),
    "alicloud:vpc/natGateway:NatGateway": _fields(
        f"{_ALI}resource_alicloud_nat_gateway.go",
        {
            "internetChargeType": 50,
            "paymentType": 76,
            "instanceChargeType": 84,
            "vpcId": 167,
            "privateLinkEnabled": 194,
            "accessMode": 199,
            "accessMode.modeValue": 207,
            "accessMode.tunnelType": 213,
        },
    ),
    "alicloud:ecs/eipAddress:EipAddress": _fields(
        f"{_ALI}resource_alicloud_eip_address.go",
        {
            "allocationId": 44,
            "highDefinitionMonitorLogStatus": 73,
            "internetChargeType": 80,
            "ipAddress": 87,
            "isp": 93,
            "netmode": 114,
            "paymentType": 122,
            "publicIpAddressPoolId": 138,
            "securityProtectionTypes": 148,
            "zone": 160,
            "instanceChargeType": 173,
        },
    ),
    "alicloud:ecs/eipAssociation:EipAssociation": _fields(
        f"{_ALI}resource_alicloud_eip_association.go",
        {
            "allocationId": 33,
            "instanceId": 42,
            "instanceType": 48,
            "privateIpAddress": 59,
            "vpcId": 64,
        },
    ),
    "alicloud:vpc/snatEntry:SnatEntry": _fields(
        f"{_ALI}resource_alicloud_snat_entry.go",
        {"snatTableId": 50, "sourceCidr": 55, "sourceVswitchId": 62},
    ),
    "alicloud:kms/key:Key": _fields(
        f"{_ALI}resource_alicloud_kms_key.go",
        {"dkmsInstanceId": 54, "keySpec": 60, "keyUsage": 67, "origin": 74, "protectionLevel": 95},
    ),
    "alicloud:kms/alias:Alias": _fields(
        f"{_ALI}resource_alicloud_kms_alias.go",
        {"aliasName": 26},
    ),
    "alicloud:ram/role:Role": _fields(
        f"{_ALI}resource_alicloud_ram_role.go",
        {"roleName": 67, "name": 75},
    ),
    "alicloud:ram/policy:Policy": _fields(
        f"{_ALI}resource_alicloud_ram_policy.go",
        {"policyName": 54, "name": 87},
    ),
    "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment": _fields(
        f"{_ALI}resource_alicloud_ram_role_policy_attachment.go",
        {"policyName": 31, "policyType": 36, "roleName": 42},
    ),
    "alicloud:oss/bucketAcl:BucketAcl": _fields(
        f"{_ALI}resource_alicloud_oss_bucket_acl.go",
        {"bucket": 36},
    ),
    "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock": _fields(
        f"{_ALI}resource_alicloud_oss_bucket_public_access_block.go",
        {"bucket": 37},
    ),
    "alicloud:cs/autoscalingConfig:AutoscalingConfig": _fields(
        f"{_ALI}resource_alicloud_cs_autoscaling_config.go",
        {"clusterId": 39},
    ),
    "alicloud:ecs/ecsKeyPair:EcsKeyPair": _fields(
        f"{_ALI}resource_alicloud_ecs_key_pair.go",
        {"keyPairName": 44, "keyNamePrefix": 51, "keyFile": 76, "keyName": 81},
    ),
    "tencentcloud:Kubernetes/nodePool:NodePool": _fields(
        f"{_TC}tke/resource_tc_kubernetes_node_pool.go",
        {
            "clusterId": 38,
            "retryPolicy": 93,
            "vpcId": 102,
            "subnetIds": 109,
            "scalingMode": 119,
            "autoUpdateInstanceTags": 127,
            "nodeConfig.mountTarget": 148,
            "nodeConfig.dockerGraphPath": 154,
            "nodeConfig.dataDisks": 161,
            "nodeConfig.dataDisks[*].diskType": 169,
            "nodeConfig.dataDisks[*].diskSize": 177,
            "nodeConfig.dataDisks[*].fileSystem": 184,
            "nodeConfig.dataDisks[*].autoFormatAndMount": 191,
            "nodeConfig.dataDisks[*].mountTarget": 198,
            "nodeConfig.dataDisks[*].diskPartition": 205,
            "nodeConfig.extraArgs": 214,
            "nodeConfig.isSchedule": 233,
            "nodeConfig.desiredPodNum": 240,
            "nodeConfig.gpuArgs": 246,
            "autoScalingConfig.instanceType": 297,
            "autoScalingConfig.dataDisks[*].snapshotId": 344,
            "autoScalingConfig.password": 428,
            "autoScalingConfig.keyIds": 437,
            "autoScalingConfig.enhancedMonitorService": 474,
            "autoScalingConfig.camRoleName": 481,
            "autoScalingConfig.cdcId": 511,
            "unschedulable": 527,
        },
    ),
    "tencentcloud:Kubernetes/cluster:Cluster": _fields(
        f"{_TC}tke/resource_tc_kubernetes_cluster.go",
        {
            "clusterSubnetId": 57,
            "clusterOsType": 64,
            "containerRuntime": 74,
            "clusterDeployType": 82,
            "clusterIpvs": 105,
            "clusterExtraArgs": 204,
            "clusterExtraArgs.kubeApiservers": 212,
            "clusterExtraArgs.kubeControllerManagers": 221,
            "clusterExtraArgs.kubeSchedulers": 230,
            "isDualStack": 243,
            "nodeNameType": 251,
            "networkType": 260,
            "basePodNum": 276,
            "isNonStaticIpMode": 283,
            "dataPlaneV2": 291,
            "vpcId": 346,
            "clusterCidr": 412,
            "ignoreClusterCidrConflict": 420,
            "ignoreServiceCidrConflict": 429,
            "clusterMaxPodNum": 436,
            "clusterMaxServiceNum": 444,
            "serviceCidr": 452,
            "masterConfigs": 477,
            "masterConfigs[*].count": 484,
            "masterConfigs[*].availabilityZone": 491,
            "masterConfigs[*].instanceName": 497,
            "masterConfigs[*].instanceType": 504,
            "masterConfigs[*].instanceChargeType": 510,
            "masterConfigs[*].instanceChargeTypePrepaidPeriod": 518,
            "masterConfigs[*].instanceChargeTypePrepaidRenewFlag": 527,
            "masterConfigs[*].subnetId": 534,
            "masterConfigs[*].systemDiskType": 541,
            "masterConfigs[*].systemDiskSize": 549,
            "masterConfigs[*].dataDisks": 557,
            "masterConfigs[*].dataDisks[*].diskType": 565,
            "masterConfigs[*].dataDisks[*].diskSize": 573,
            "masterConfigs[*].dataDisks[*].snapshotId": 580,
            "masterConfigs[*].dataDisks[*].fileSystem": 596,
            "masterConfigs[*].dataDisks[*].autoFormatAndMount": 602,
            "masterConfigs[*].dataDisks[*].mountTarget": 609,
            "masterConfigs[*].dataDisks[*].diskPartition": 615,
            "masterConfigs[*].internetChargeType": 624,
            "masterConfigs[*].publicIpAssigned": 643,
            "masterConfigs[*].password": 649,
            "masterConfigs[*].keyIds": 657,
            "masterConfigs[*].securityGroupIds": 667,
            "masterConfigs[*].enhancedSecurityService": 676,
            "masterConfigs[*].enhancedMonitorService": 683,
            "masterConfigs[*].userData": 690,
            "masterConfigs[*].camRoleName": 696,
            "masterConfigs[*].hostname": 702,
            "masterConfigs[*].disasterRecoverGroupIds": 708,
            "masterConfigs[*].desiredPodNum": 724,
            "workerConfigs": 740,
            "workerConfigs[*].count": 747,
            "workerConfigs[*].availabilityZone": 754,
            "workerConfigs[*].instanceName": 760,
            "workerConfigs[*].instanceType": 767,
            "workerConfigs[*].instanceChargeType": 773,
            "workerConfigs[*].instanceChargeTypePrepaidPeriod": 781,
            "workerConfigs[*].instanceChargeTypePrepaidRenewFlag": 790,
            "workerConfigs[*].subnetId": 797,
            "workerConfigs[*].systemDiskType": 804,
            "workerConfigs[*].systemDiskSize": 812,
            "workerConfigs[*].dataDisks": 820,
            "workerConfigs[*].dataDisks[*].diskType": 828,
            "workerConfigs[*].dataDisks[*].diskSize": 836,
            "workerConfigs[*].dataDisks[*].snapshotId": 843,
            "workerConfigs[*].dataDisks[*].fileSystem": 859,
            "workerConfigs[*].dataDisks[*].autoFormatAndMount": 865,
            "workerConfigs[*].dataDisks[*].mountTarget": 872,
            "workerConfigs[*].dataDisks[*].diskPartition": 878,
            "workerConfigs[*].internetChargeType": 887,
            "workerConfigs[*].publicIpAssigned": 906,
            "workerConfigs[*].password": 912,
            "workerConfigs[*].keyIds": 920,
            "workerConfigs[*].securityGroupIds": 930,
            "workerConfigs[*].enhancedSecurityService": 939,
            "workerConfigs[*].enhancedMonitorService": 946,
            "workerConfigs[*].userData": 953,
            "workerConfigs[*].camRoleName": 959,
            "workerConfigs[*].hostname": 965,
            "workerConfigs[*].disasterRecoverGroupIds": 971,
            "workerConfigs[*].desiredPodNum": 987,
            "labels": 1435,
            "unschedulable": 1442,
            "mountTarget": 1451,
            "globeDesiredPodNum": 1458,
            "dockerGraphPath": 1465,
            "preStartUserScript": 1474,
            "extraArgs": 1481,
        },
    ),
    "tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint": _fields(
        f"{_TC}tke/resource_tc_kubernetes_cluster_endpoint.go",
        {"clusterId": 28, "extensiveParameters": 65},
    ),
    "tencentcloud:Subnet/instance:Instance": _fields(
        f"{_TC}vpc/resource_tc_subnet.go",
        {"vpcId": 32, "availabilityZone": 38, "cidrBlock": 50, "cdcId": 63},
    ),
    "tencentcloud:Vpc/instance:Instance": _fields(
        f"{_TC}vpc/resource_tc_vpc.go",
        {"cidrBlock": 41},
    ),
    "tencentcloud:Cos/bucket:Bucket": _fields(
        f"{_TC}cos/resource_tc_cos_bucket.go",
        {"bucket": 176, "multiAz": 579, "chdfsOfs": 585, "cdcId": 610},
    ),
    "tencentcloud:Instance/instance:Instance": _fields(
        f"{_TC}cvm/resource_tc_instance.go",
        {
            "availabilityZone": 56,
            "dedicatedClusterId": 63,
            "spotMaxPrice": 159,
            "cdhHostId": 173,
            "allocatePublicIp": 207,
            "ipv4AddressType": 213,
            "ipv6AddressType": 221,
            "ipv6AddressCount": 229,
            "antiDdosPackageId": 236,
            "dataDisks": 313,
            "dataDisks[*].dataDiskType": 320,
            "dataDisks[*].dataDiskSnapshotId": 337,
            "dataDisks[*].deleteWithInstance": 350,
            "dataDisks[*].deleteWithInstancePrepaid": 357,
            "dataDisks[*].kmsKeyId": 363,
            "dataDisks[*].encrypt": 371,
            "dataDisks[*].throughputPerformance": 378,
            "hpcClusterId": 490,
            "launchTemplateId": 497,
            "launchTemplateVersion": 503,
        },
    ),
    "tencentcloud:Security/group:Group": _fields(
        f"{_TC}vpc/resource_tc_security_group.go",
        {"projectId": 47},
    ),
    "tencentcloud:Security/groupRuleSet:GroupRuleSet": _fields(
        f"{_TC}vpc/resource_tc_security_group_rule_set.go",
        {"securityGroupId": 97},
    ),
    "tencentcloud:Nat/gateway:Gateway": _fields(
        f"{_TC}vpc/resource_tc_nat_gateway.go",
        {
            "vpcId": 35,
            "subnetId": 78,
            "natProductVersion": 85,
            "stockPublicIpAddressesBandwidthOut": 93,
        },
    ),
    "tencentcloud:Eip/instance:Instance": _fields(
        f"{_TC}cvm/resource_tc_eip.go",
        {"type": 43, "anycastZone": 49, "internetServiceProvider": 61},
    ),
    "tencentcloud:Kms/key:Key": _fields(
        f"{_TC}kms/resource_tc_kms_key.go",
        {"keyUsage": 69},
    ),
    "tencentcloud:Cam/role:Role": _fields(
        f"{_TC}cam/resource_tc_cam_role.go",
        {"name": 37},
    ),
    "tencentcloud:Cam/policy:Policy": _fields(
        f"{_TC}cam/resource_tc_cam_policy.go",
        {"name": 37},
    ),
    "tencentcloud:Cam/rolePolicyAttachment:RolePolicyAttachment": _fields(
        f"{_TC}cam/resource_tc_cam_role_policy_attachment.go",
        {"roleId": 30, "policyId": 36},
    ),
    "tencentcloud:Route/table:Table": _fields(
        f"{_TC}vpc/resource_tc_route_table.go",
        {"vpcId": 31},
    ),
    "tencentcloud:Route/tableEntry:TableEntry": _fields(
        f"{_TC}vpc/resource_tc_route_table_entry.go",
        {
            "routeTableId": 34,
            "destinationCidrBlock": 40,
            "nextType": 47,
            "nextHub": 54,
            "description": 67,
        },
    ),
    "tencentcloud:Key/pair:Pair": _fields(
        f"{_TC}cvm/resource_tc_key_pair.go",
        {"publicKey": 41, "projectId": 61},
    ),
    "tencentcloud:Kubernetes/encryptionProtection:EncryptionProtection": _fields(
        f"{_TC}tke/resource_tc_kubernetes_encryption_protection.go",
        {"clusterId": 25, "kmsConfiguration": 32},
    ),
}

# --- Kubernetes --------------------------------------------------------------------------
_K8S = "pulumi/pulumi-kubernetes@94977969 provider/pkg/provider/diff.go"
_METADATA = {"metadata.name": 209, "metadata.namespace": 210}
_SELECTOR = {"spec.selector": 166}
_KINDS: dict[str, dict[str, int]] = {
    "apps/v1:DaemonSet": _SELECTOR,
    "apps/v1:Deployment": {"spec.selector": 173},
    "apps/v1:StatefulSet": {
        "spec.podManagementPolicy": 198,
        "spec.revisionHistoryLimit": 199,
        "spec.selector": 200,
        "spec.serviceName": 201,
        "spec.volumeClaimTemplates": 202,
    },
    "batch/v1:Job": {
        "spec.completions": 180,
        "spec.parallelism": 181,
        "spec.selector": 182,
        "spec.template": 183,
    },
    # ConfigMaps and Secrets are replaced on a data change unless the provider sets
    # enableConfigMapMutable / enableSecretMutable (ours does not): diff.go:28-33.
    "core/v1:ConfigMap": {"data": 32, "binaryData": 32},
    "core/v1:Secret": {"type": 29, "stringData": 29, "data": 29},
    "core/v1:Service": {"spec.clusterIP": 159},
    "core/v1:PersistentVolumeClaim": {
        "spec.accessModes": 113,
        "spec.selector": 114,
        "spec.storageClassName": 115,
        "spec.volumeName": 116,
    },
    "rbac.authorization.k8s.io/v1:ClusterRoleBinding": {"roleRef": 193},
    "rbac.authorization.k8s.io/v1:RoleBinding": {"roleRef": 193},
    "storage.k8s.io/v1:StorageClass": {"parameters": 71, "provisioner": 72},
}
_HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def for_type(type_: str) -> ForceNew | None:
    """The replace-forcing inputs of `type_`, or None when none are encoded for it."""
    if type_ in FORCE_NEW:
        return FORCE_NEW[type_]
    if type_ == _HELM_RELEASE:
        return _fields(
            "pulumi/pulumi-kubernetes@94977969 provider/pkg/provider/helm_release.go",
            {"name": 907, "namespace": 907},
        )
    if type_.startswith("kubernetes:") and type_.count(":") == 2:
        kind = type_.split(":", 1)[1]
        return _fields(_K8S, {**_METADATA, **_KINDS.get(kind, {})})
    return None


@dataclass(frozen=True)
class Replacement:
    """Why a change replaces its resource: the forcing fields, and the source."""

    fields: tuple[str, ...]
    source: str
    reasons: tuple[str, ...] = field(default=())


def replacement(
    type_: str, old: Mapping[str, Any], new: Mapping[str, Any], changed: list[str]
) -> Replacement | None:
    """None when no change in `changed` (flattened input paths) forces a replacement."""
    rules = for_type(type_)
    if rules is None:
        return None
    fields = sorted({f for p in changed if (f := rules.forced_by(p))})
    reasons = tuple(r for check in rules.conditional if (r := check(old, new)))
    if not fields and not reasons:
        return None
    return Replacement(tuple(fields), rules.source, reasons)


def covers(type_: str) -> bool:
    """True when replacements of `type_` are encoded (a provider-created type, that is)."""
    return for_type(type_) is not None
