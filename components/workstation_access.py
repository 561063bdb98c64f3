"""How people reach a workstation, the same on every cloud: an SSH command and the Jupyter URL."""

from __future__ import annotations

import pulumi

from components.workstation_cloud_init import JUPYTER_PORT


def ssh_command(address: pulumi.Output[str], login_user: str) -> pulumi.Output[str]:
    return address.apply(lambda host: f"ssh {login_user}@{host}")


def jupyter_url(address: pulumi.Output[str], token: pulumi.Output[str]) -> pulumi.Output[str]:
    """Carries the token, so it is a secret whatever `address` is."""
    return pulumi.Output.secret(
        pulumi.Output.all(address, token).apply(
            lambda parts: f"http://{parts[0]}:{JUPYTER_PORT}/lab?token={parts[1]}"
        )
    )
