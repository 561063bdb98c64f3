"""What every cloud's GPU workstation shares: its Jupyter token, and how people reach it
(an SSH command and the Jupyter URL), published the same way on every cloud."""

from __future__ import annotations

import pulumi
import pulumi_random as random

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


class WorkstationBase(pulumi.ComponentResource):
    """Base of each cloud's `GpuWorkstation`: the outputs they all offer."""

    address: pulumi.Output[str]
    """Public DNS name or IP (public subnet), else the private IP."""
    ssh_command: pulumi.Output[str]
    jupyter_url: pulumi.Output[str]
    """Holds the token: a secret."""
    instance_id: pulumi.Output[str]

    def instance_options(self, *, image: str, user_data: str) -> pulumi.ResourceOptions:
        """The VM keeps the image and user data it was created with.

        The image comes from a "newest" lookup and the user data from this package's
        cloud-init template, so both change without the user asking; either change would
        replace (or, on EC2, stop and start) the workstation and its disk with the user's
        notebooks, while cloud-init only ever runs at first boot. A new image or template
        applies to a workstation made anew: `pulumi up --replace <its URN>`.
        """
        return pulumi.ResourceOptions(parent=self, ignore_changes=[image, user_data])

    def new_jupyter_token(self, name: str) -> pulumi.Output[str]:
        """Letters and digits only (it travels in a URL); a secret from the start."""
        token = random.RandomPassword(
            f"{name}-jupyter-token",
            length=48,
            special=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return pulumi.Output.secret(token.result)

    def publish(
        self,
        *,
        instance_id: pulumi.Output[str],
        address: pulumi.Output[str],
        login_user: str,
        jupyter_token: pulumi.Output[str],
    ) -> None:
        self.instance_id = instance_id
        self.address = address
        self.ssh_command = ssh_command(address, login_user)
        self.jupyter_url = jupyter_url(address, jupyter_token)
        self.register_outputs(
            {
                "instance_id": self.instance_id,
                "address": self.address,
                "ssh_command": self.ssh_command,
                "jupyter_url": self.jupyter_url,
            }
        )
