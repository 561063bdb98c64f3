"""The CVM key pair TKE nodes are created with.

A TKE node pool's launch configuration needs either `key_ids` or a `password`
(terraform-provider-tencentcloud@v1.82.42
tencentcloud/services/tke/resource_tc_kubernetes_node_pool_extension.go:1025-1049). A key pair
keeps any password out of the launch configuration. CVM generates it (no `public_key`:
CreateKeyPair, tencentcloud/services/cvm/resource_tc_key_pair.go:159-163); the private key
is kept only in the Pulumi state, as a secret, for break-glass SSH
(`pulumi stack export --show-secrets`). Nodes are normally reached through kubectl.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from .names import key_pair_name


@dataclass(frozen=True)
class NodeKeyPairArgs:
    name_prefix: str
    tags: Mapping[str, str]


class NodeKeyPair(pulumi.ComponentResource):
    key_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeKeyPairArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:NodeKeyPair", name, None, opts)
        pair = tencentcloud.key.Pair(
            f"{name}-nodes-key",
            key_name=key_pair_name(args.name_prefix, "nodes"),
            tags=dict(args.tags),
            # The provider's `private_key` is not marked sensitive: keep it encrypted in state.
            opts=pulumi.ResourceOptions(parent=self, additional_secret_outputs=["privateKey"]),
        )
        self.key_id = pair.id
        self.register_outputs({"key_id": self.key_id})
