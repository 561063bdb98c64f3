"""Copies an OSS prefix to a local folder with ossutil, as the ECS instance's RAM role.

Shipped to the GPU workstation by its cloud-init and run there by the TensorBoard sync
service, with only the standard library. ossutil 1.x's `--mode EcsRamRole` reads the role's
credentials from the metadata service without a session token (lib/ecs_role.go at v1.7.19),
which the workstation's hardened metadata mode refuses. So this asks for a token first (ECS
docs, "instance metadata", hardened mode: PUT /latest/api/token, then the
`X-aliyun-ecs-metadata-token` header) and hands the role's temporary credentials to ossutil in
a config file only its user can read, never on a command line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

METADATA_URL = "http://100.100.100.200"
TOKEN_TTL_SECONDS = 300
"""Long enough for two requests; the hardened mode accepts 1 to 21600."""
TIMEOUT_SECONDS = 5


class MetadataError(Exception):
    """The metadata service gave no credentials for the role."""


def role_credentials(role: str, base_url: str = METADATA_URL) -> dict[str, str]:
    """AccessKeyId, AccessKeySecret and SecurityToken of the instance's RAM role."""
    # The metadata service is link-local: never through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    token_request = urllib.request.Request(
        f"{base_url}/latest/api/token",
        method="PUT",
        headers={"X-aliyun-ecs-metadata-token-ttl-seconds": str(TOKEN_TTL_SECONDS)},
    )
    try:
        with opener.open(token_request, timeout=TIMEOUT_SECONDS) as response:
            token = response.read().decode().strip()
        credentials_request = urllib.request.Request(
            f"{base_url}/latest/meta-data/ram/security-credentials/{role}",
            headers={"X-aliyun-ecs-metadata-token": token},
        )
        with opener.open(credentials_request, timeout=TIMEOUT_SECONDS) as response:
            body = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise MetadataError(f"metadata service: {error}") from None
    if not isinstance(body, dict) or body.get("Code", "Success") != "Success":
        raise MetadataError(f"metadata service refused role {role!r}: {body}")
    try:
        return {k: str(body[k]) for k in ("AccessKeyId", "AccessKeySecret", "SecurityToken")}
    except KeyError as missing:
        raise MetadataError(f"metadata service answer for {role!r} lacks {missing}") from None


def ossutil_config(endpoint: str, credentials: dict[str, str]) -> str:
    """ossutil 1.x config: its [Credentials] section (lib/config_helper.go at v1.7.19)."""
    return (
        "[Credentials]\n"
        f"endpoint={endpoint}\n"
        f"accessKeyID={credentials['AccessKeyId']}\n"
        f"accessKeySecret={credentials['AccessKeySecret']}\n"
        f"stsToken={credentials['SecurityToken']}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", required=True, help="the instance's RAM role name")
    parser.add_argument("--endpoint", required=True, help="OSS endpoint, e.g. the internal one")
    parser.add_argument("--ossutil", default="ossutil")
    parser.add_argument("--metadata-url", default=METADATA_URL)
    parser.add_argument("source", help="oss://bucket/prefix/")
    parser.add_argument("destination", help="local folder")
    args = parser.parse_args(argv)
    try:
        credentials = role_credentials(args.role, args.metadata_url)
    except MetadataError as error:
        print(f"oss sync: {error}", file=sys.stderr)
        return 1
    # mkstemp creates the file readable and writable by its owner only.
    fd, path = tempfile.mkstemp(prefix="ossutil-", suffix=".conf")
    try:
        with os.fdopen(fd, "w") as config:
            config.write(ossutil_config(args.endpoint, credentials))
        # -f: no prompts; -u: only objects newer than the local copy (ossutil sync --help).
        command = [args.ossutil, "sync", args.source, args.destination, "-f", "-u", "-c", path]
        return subprocess.run(command, check=False).returncode
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
