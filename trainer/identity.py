"""Pod identity -> temporary storage credentials, through each cloud's own credential library.

No static keys anywhere. Each platform's webhook puts its identity into the pod's environment
(see ``/work/helpers/JOB_ENV.md`` in the project, and the README's "Object storage"):

* ``s3://`` (EKS IRSA: ``AWS_ROLE_ARN``, ``AWS_WEB_IDENTITY_TOKEN_FILE``): botocore's own
  credential chain does the STS ``AssumeRoleWithWebIdentity`` exchange; nothing here.
* ``oss://`` (ACK RRSA: ``ALIBABA_CLOUD_ROLE_ARN``, ``ALIBABA_CLOUD_OIDC_PROVIDER_ARN``,
  ``ALIBABA_CLOUD_OIDC_TOKEN_FILE``): ``alibabacloud-credentials``'
  ``OIDCRoleArnCredentialsProvider`` calls Alibaba STS ``AssumeRoleWithOIDC``.
* ``cosn://`` (TKE pod identity: ``TKE_ROLE_ARN``, ``TKE_WEB_IDENTITY_TOKEN_FILE``,
  ``TKE_PROVIDER_ID``, ``TKE_REGION``): ``tencentcloud-sdk-python-common``'s
  ``DefaultTkeOIDCRoleArnProvider`` calls Tencent STS ``AssumeRoleWithWebIdentity``.
* ``tos://`` (VKE IRSA: ``VOLCENGINE_OIDC_ROLE_TRN``, ``VOLCENGINE_OIDC_TOKEN_FILE``):
  ``volcenginesdk-core``'s ``StsOidcCredentialProvider`` calls Volcano Engine STS
  ``AssumeRoleWithOIDC``.

The temporary AccessKey/secret/token then sign the S3-API requests to the bucket: they are
handed to botocore as refreshable credentials, so a run of days gets a new set before each
one expires, and the projected token file is read again at each exchange (the kubelet
rotates it). Each library is imported only when its scheme is used.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from trainer.errors import UserError

#: the env each platform's webhook injects, by URI scheme (all names must be present)
RRSA_ENV = (
    "ALIBABA_CLOUD_ROLE_ARN",
    "ALIBABA_CLOUD_OIDC_PROVIDER_ARN",
    "ALIBABA_CLOUD_OIDC_TOKEN_FILE",
)
TKE_ENV = ("TKE_ROLE_ARN", "TKE_WEB_IDENTITY_TOKEN_FILE", "TKE_PROVIDER_ID", "TKE_REGION")
#: VKE IRSA; VOLCENGINE_OIDC_ROLE_SESSION_NAME and VOLCENGINE_OIDC_STS_ENDPOINT are optional
VKE_ENV = ("VOLCENGINE_OIDC_ROLE_TRN", "VOLCENGINE_OIDC_TOKEN_FILE")
IDENTITY_ENV = {"oss": RRSA_ENV, "cosn": TKE_ENV, "tos": VKE_ENV}
PLATFORM = {"oss": "ACK RRSA", "cosn": "TKE pod identity", "tos": "VKE IRSA"}
#: the Python package that does each exchange (pip name, import name)
LIBRARY = {
    "oss": ("alibabacloud-credentials", "alibabacloud_credentials"),
    "cosn": ("tencentcloud-sdk-python-common", "tencentcloud"),
    "tos": ("volcenginesdk-core", "volcenginesdkcore"),
}
#: seconds Tencent STS is asked for: DefaultTkeOIDCRoleArnProvider's fixed DurationSeconds
TKE_DURATION_S = 7200

Metadata = dict[str, str]
"""botocore's refreshable-credentials metadata: access_key, secret_key, token, expiry_time."""


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_identity_env(scheme: str) -> None:
    """Refuse (exit 64) when the pod's identity env for ``scheme`` is missing or unreadable."""
    names = IDENTITY_ENV[scheme]
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        raise UserError(
            f"{scheme}:// checkpoints authenticate with {PLATFORM[scheme]} (no static keys), "
            f"but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set; "
            "bind the Job's ServiceAccount to a role so the platform's webhook injects them"
        )
    token_file = next(os.environ[n] for n in names if n.endswith("TOKEN_FILE"))
    if not os.path.isfile(token_file):
        raise UserError(f"{scheme}:// identity token file {token_file!r} does not exist")
    pip_name, module = LIBRARY[scheme]
    try:
        __import__(module)
    except ImportError:
        raise UserError(
            f"{scheme}:// checkpoints need {pip_name} for the {PLATFORM[scheme]} exchange; "
            "pip install -r trainer/requirements.txt"
        ) from None


def alibaba_rrsa(sts_endpoint: str | None, region: str | None) -> Metadata:
    """One Alibaba STS ``AssumeRoleWithOIDC`` exchange of the RRSA token (a fresh provider,
    so the token file is read again and nothing stale is cached)."""
    from alibabacloud_credentials.provider.oidc import OIDCRoleArnCredentialsProvider

    # The library reads its env once, at import; pass what it needs explicitly.
    provider = OIDCRoleArnCredentialsProvider(
        role_arn=os.environ["ALIBABA_CLOUD_ROLE_ARN"],
        oidc_provider_arn=os.environ["ALIBABA_CLOUD_OIDC_PROVIDER_ARN"],
        oidc_token_file_path=os.environ["ALIBABA_CLOUD_OIDC_TOKEN_FILE"],
        role_session_name=os.environ.get("ALIBABA_CLOUD_ROLE_SESSION_NAME") or "gpuinfra-trainer",
        sts_endpoint=sts_endpoint,
        sts_region_id=os.environ.get("ALIBABA_CLOUD_STS_REGION") or region,
        enable_vpc=os.environ.get("ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED", "").lower() == "true",
    )
    cred = provider.get_credentials()
    return {
        "access_key": cred.get_access_key_id(),
        "secret_key": cred.get_access_key_secret(),
        "token": cred.get_security_token(),
        "expiry_time": _iso(cred.get_expiration()),
    }


def tencent_tke(sts_endpoint: str | None) -> Metadata:
    """One Tencent STS ``AssumeRoleWithWebIdentity`` exchange of the TKE token."""
    from tencentcloud.common.credential import DefaultTkeOIDCRoleArnProvider

    asked = time.time()
    cred = DefaultTkeOIDCRoleArnProvider().get_credentials()  # reads the TKE_* env
    if sts_endpoint:
        cred.endpoint = sts_endpoint
    secret_id, secret_key, token = cred.get_credential_info()  # the exchange happens here
    return {
        "access_key": secret_id,
        "secret_key": secret_key,
        "token": token,
        # The library keeps no public expiry: count from before the request, as it does
        # (it refreshes 10 % early too).
        "expiry_time": _iso(asked + TKE_DURATION_S * 0.9),
    }


def volcengine_irsa(sts_endpoint: str | None) -> Metadata:
    """One Volcano Engine STS ``AssumeRoleWithOIDC`` exchange of the VKE IRSA token (a fresh
    provider: the token file is read again, nothing stale is cached)."""
    from volcenginesdkcore.auth.providers.sts_oidc_provider import StsOidcCredentialProvider

    provider = StsOidcCredentialProvider(
        role_trn=os.environ["VOLCENGINE_OIDC_ROLE_TRN"],
        oidc_token_file=os.environ["VOLCENGINE_OIDC_TOKEN_FILE"],
        session_name=os.environ.get("VOLCENGINE_OIDC_ROLE_SESSION_NAME") or "gpuinfra-trainer",
        # An explicit None makes the provider read VOLCENGINE_OIDC_STS_ENDPOINT, else its
        # default sts.volcengineapi.com (the argument's own default skips the env). A URL with
        # http:// or https:// is taken as it is; a bare host gets https.
        host=sts_endpoint or None,
    )
    cred = provider.get_credentials()  # the exchange happens here
    return {
        "access_key": cred.ak,
        "secret_key": cred.sk,
        "token": cred.session_token,
        "expiry_time": _iso(provider.expired_time),  # from the answer's Expiration
    }


def exchange_for(
    scheme: str, sts_endpoint: str | None, region: str | None
) -> Callable[[], Metadata]:
    """The exchange that turns the pod identity of ``scheme`` into storage credentials."""
    if scheme == "oss":
        return lambda: alibaba_rrsa(sts_endpoint, region)
    if scheme == "cosn":
        return lambda: tencent_tke(sts_endpoint)
    if scheme == "tos":
        return lambda: volcengine_irsa(sts_endpoint)
    raise ValueError(scheme)


def session_with(exchange: Callable[[], Metadata], method: str) -> Any:
    """An aiobotocore session (for s3fs) whose only credentials are ``exchange``'s, refreshed
    by botocore before they expire. The first exchange runs now, so a wrong role fails at
    start. No other source (AWS env keys, instance profile) is consulted."""
    from aiobotocore.credentials import AioCredentialResolver, AioRefreshableCredentials
    from aiobotocore.session import AioSession
    from botocore.credentials import CredentialProvider

    first = exchange()

    async def refresh() -> Metadata:
        return await asyncio.to_thread(exchange)  # the libraries are synchronous

    class PodIdentity(CredentialProvider):  # type: ignore[misc]
        METHOD = method

        async def load(self) -> Any:
            return AioRefreshableCredentials.create_from_metadata(
                metadata=first, refresh_using=refresh, method=method
            )

    session = AioSession()
    session.register_component("credential_provider", AioCredentialResolver([PodIdentity()]))
    return session
