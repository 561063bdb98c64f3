"""What every cloud's GPU workstation shares: how people reach it, published the same way on
every cloud.

JupyterLab and TensorBoard listen on the VM's loopback only; the way in is an SSH tunnel
(`workstationTunnelCommand`), then http://localhost:8888/lab and http://localhost:6006/ on
the user's machine. The Jupyter token is generated on the VM: `workstationJupyterTokenCommand`
prints it over SSH. No output holds a secret.
"""

from __future__ import annotations

import shlex

import pulumi

from components.workstation_cloud_init import (
    JUPYTER_PORT,
    LISTEN_ADDRESS,
    TENSORBOARD_PORT,
    Layout,
)

JUPYTER_URL = f"http://localhost:{JUPYTER_PORT}/lab"
"""Jupyter as the user's browser reaches it through the tunnel."""
TENSORBOARD_URL = f"http://localhost:{TENSORBOARD_PORT}/"


def ssh_command(address: pulumi.Output[str], login_user: str) -> pulumi.Output[str]:
    return address.apply(lambda host: f"ssh {login_user}@{host}")


def tunnel_command(address: pulumi.Output[str], login_user: str) -> pulumi.Output[str]:
    """Forwards the user's localhost:8888 and :6006 to the servers on the VM's loopback."""
    forwards = " ".join(
        f"-L {port}:{LISTEN_ADDRESS}:{port}" for port in (JUPYTER_PORT, TENSORBOARD_PORT)
    )
    return address.apply(lambda host: f"ssh -N {forwards} {login_user}@{host}")


def token_command(
    address: pulumi.Output[str], login_user: str, token_file: str
) -> pulumi.Output[str]:
    """Prints the token the VM generated (root-readable; the login user has sudo or is root)."""
    read = f"cat {shlex.quote(token_file)}"
    if login_user != "root":
        read = f"sudo {read}"
    return address.apply(lambda host: f"ssh {login_user}@{host} {read}")


class WorkstationBase(pulumi.ComponentResource):
    """Base of each cloud's `GpuWorkstation`: the outputs they all offer."""

    address: pulumi.Output[str]
    """Public DNS name or IP (public subnet), else the private IP."""
    ssh_command: pulumi.Output[str]
    tunnel_command: pulumi.Output[str]
    jupyter_token_command: pulumi.Output[str]
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

    def publish(
        self,
        *,
        instance_id: pulumi.Output[str],
        address: pulumi.Output[str],
        login_user: str,
        layout: Layout,
    ) -> None:
        self.instance_id = instance_id
        self.address = address
        self.ssh_command = ssh_command(address, login_user)
        self.tunnel_command = tunnel_command(address, login_user)
        self.jupyter_token_command = token_command(address, login_user, layout.token_file)
        self.register_outputs(
            {
                "instance_id": self.instance_id,
                "address": self.address,
                "ssh_command": self.ssh_command,
                "tunnel_command": self.tunnel_command,
                "jupyter_token_command": self.jupyter_token_command,
            }
        )

    def export_outputs(self) -> None:
        """The stack outputs the README's workstation section names."""
        pulumi.export("workstationAddress", self.address)
        pulumi.export("workstationSshCommand", self.ssh_command)
        pulumi.export("workstationTunnelCommand", self.tunnel_command)
        pulumi.export("workstationJupyterTokenCommand", self.jupyter_token_command)
        pulumi.export("workstationJupyterUrl", JUPYTER_URL)
        pulumi.export("workstationTensorBoardUrl", TENSORBOARD_URL)
