"""Local stand-ins for the clouds' object storage and STS, recording what reaches them.

* :class:`RecordingMoto`: moto's S3 (and AWS STS) in a thread on 127.0.0.1, behind a WSGI
  layer that records each request's host, path, signature and security token, and the
  credentials each STS exchange handed out. ``localhost`` names resolve to it
  (:func:`resolve_localhost_subdomains`), so virtual-hosted buckets (OSS, COS) work.
* :func:`fake_sts`: Alibaba STS ``AssumeRoleWithOIDC``, Tencent STS
  ``AssumeRoleWithWebIdentity`` and Volcano Engine STS ``AssumeRoleWithOIDC`` as the cloud
  libraries call them, on ``tests/fake_http.py``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs

import pytest

from tests.fake_http import Fake

BUCKET = "trainer-ckpt"


@dataclass
class Seen:
    """One request that reached the S3 stand-in."""

    method: str
    host: str
    path: str
    authorization: str
    token: str | None
    #: the flexible-checksum headers botocore >= 1.36 adds by default (aws-chunked uploads
    #: with a trailing checksum, x-amz-checksum-*), which OSS, COS and TOS are not sent
    checksum_headers: tuple[str, ...] = ()
    #: the Content-MD5 header, and the MD5 of the body as the server got it (base64)
    content_md5: str | None = None
    body_md5: str = ""


@dataclass
class RecordingMoto:
    """moto behind a recorder; ``requests`` and ``sts_credentials`` fill as the test runs."""

    port: int
    requests: list[Seen] = field(default_factory=list)
    sts_credentials: list[dict[str, str]] = field(default_factory=list)

    @property
    def ip_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host_url(self) -> str:
        """The endpoint by name: virtual-hosted buckets become ``<bucket>.localhost``."""
        return f"http://localhost:{self.port}"

    def storage_requests(self) -> list[Seen]:
        """The trainer's requests to the bucket (not STS, not the test's own admin client)."""
        return [
            r
            for r in self.requests
            if "Action=" not in r.path and "Credential=admin/" not in r.authorization
        ]


def _checksum_headers(environ: dict[str, Any]) -> tuple[str, ...]:
    found = [
        k
        for k in environ
        if k.startswith(("HTTP_X_AMZ_CHECKSUM_", "HTTP_X_AMZ_SDK_CHECKSUM_", "HTTP_X_AMZ_TRAILER"))
    ]
    if "aws-chunked" in environ.get("HTTP_CONTENT_ENCODING", ""):
        found.append("HTTP_CONTENT_ENCODING=aws-chunked")
    return tuple(sorted(found))


def _recorder(app: Any, box: RecordingMoto) -> Any:
    def wsgi(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        query = environ.get("QUERY_STRING", "")
        is_sts = b"AssumeRoleWithWebIdentity" in body
        box.requests.append(
            Seen(
                environ["REQUEST_METHOD"],
                environ.get("HTTP_HOST", ""),
                environ.get("PATH_INFO", "") + ("?" + query if query else ""),
                environ.get("HTTP_AUTHORIZATION", ""),
                environ.get("HTTP_X_AMZ_SECURITY_TOKEN"),
                _checksum_headers(environ),
                environ.get("HTTP_CONTENT_MD5"),
                base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode(),
            )
        )
        if is_sts:
            box.requests[-1].path += "?Action=AssumeRoleWithWebIdentity"
        reply = b"".join(app(environ, start_response))
        if is_sts:
            text = reply.decode()
            box.sts_credentials.append(
                {
                    k: m[1]
                    for k in ("AccessKeyId", "SecretAccessKey", "SessionToken")
                    if (m := re.search(f"<{k}>([^<]+)</{k}>", text))
                }
            )
        return [reply]

    return wsgi


@pytest.fixture
def moto_s3() -> Iterator[RecordingMoto]:
    """A fresh moto (S3 + STS) on a free port with the test bucket created."""
    import boto3
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    app = DomainDispatcherApplication(create_backend_app)
    box = RecordingMoto(port=0)
    server = make_server(
        "127.0.0.1", 0, _recorder(app, box), threaded=True, request_handler=MotoRequestHandler
    )
    box.port = server.server_port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # moto's backends live in this process: start from nothing, whatever ran before
    urllib.request.urlopen(urllib.request.Request(f"{box.ip_url}/moto-api/reset", method="POST"))
    admin = boto3.client(
        "s3",
        endpoint_url=box.ip_url,
        region_name="us-east-1",
        aws_access_key_id="admin",
        aws_secret_access_key="admin",
    )
    admin.create_bucket(Bucket=BUCKET)
    box.requests.clear()
    box.admin = admin  # type: ignore[attr-defined]
    try:
        yield box
    finally:
        server.shutdown()
        thread.join(5)


@pytest.fixture
def resolve_localhost_subdomains(monkeypatch: pytest.MonkeyPatch) -> None:
    """``<bucket>.localhost`` -> 127.0.0.1 in this process, as DNS does for the real hosts."""
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return original(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def clean_cloud_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: Any) -> None:
    """No ambient credentials, config files or proxies from the machine running the tests;
    decoy AWS keys, which oss://, cosn:// and tos:// must never send."""
    import os

    for name in list(os.environ):
        if name.startswith(
            ("AWS_", "ALIBABA_CLOUD_", "TKE_", "TENCENTCLOUD_", "VOLCENGINE_", "STORAGE_")
        ):
            monkeypatch.delenv(name)
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name)
    for name in ("CHECKPOINT_URI", "TRAINER_CHECKPOINT_URI"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))  # no ~/.aws, ~/.alibabacloud, ~/.tencentcloud
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FakeSts:
    """What the fake STS answered: one set of keys per exchange, numbered from 1."""

    server: Fake
    issued: list[dict[str, str]] = field(default_factory=list)
    lifetime_s: float = 3600.0

    @property
    def url(self) -> str:
        return self.server.url

    def calls(self, action: str) -> list[tuple[str, str, dict[str, str], Any]]:
        return [c for c in self.server.seen if action in c[1] or action in str(c[2])]


def _answer(sts: FakeSts) -> Any:
    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        n = len(sts.issued) + 1
        if headers.get("x-tc-action") == "AssumeRoleWithWebIdentity":  # Tencent, JSON body
            keys = {"id": f"AKIDtke{n}", "secret": f"tke-secret-{n}", "token": f"tke-token-{n}"}
            sts.issued.append(keys)
            expires = time.time() + sts.lifetime_s
            return 200, {
                "Response": {
                    "Credentials": {
                        "Token": keys["token"],
                        "TmpSecretId": keys["id"],
                        "TmpSecretKey": keys["secret"],
                    },
                    "ExpiredTime": int(expires),
                    "Expiration": _iso(expires),
                    "RequestId": f"req-{n}",
                }
            }
        query = parse_qs(path.partition("?")[2])
        if query.get("Version") == ["2018-01-01"] and query.get("Action") == ["AssumeRoleWithOIDC"]:
            # Volcano Engine: a form POST; the answer's shape is the one volcengine-go-sdk
            # (volcengine/credentials/assume_role_oidc_provider.go, AssumeRoleWithOIDCResponse)
            # and volcenginesdk-core read: Result.Credentials, Expiration in RFC 3339.
            keys = {"id": f"AKTPvke{n}", "secret": f"vke-secret-{n}", "token": f"vke-token-{n}"}
            sts.issued.append(keys)
            now, beijing = time.time(), timezone(timedelta(hours=8))
            stamp = "%Y-%m-%dT%H:%M:%S%z"
            return 200, {
                "ResponseMetadata": {
                    "RequestId": f"req-{n}",
                    "Action": "AssumeRoleWithOIDC",
                    "Version": "2018-01-01",
                    "Service": "sts",
                    "Region": "cn-beijing",
                },
                "Result": {
                    "Credentials": {
                        "CurrentTime": datetime.fromtimestamp(now, beijing).strftime(stamp),
                        "Expiration": datetime.fromtimestamp(
                            now + sts.lifetime_s, beijing
                        ).strftime(stamp),
                        "AccessKeyId": keys["id"],
                        "SecretAccessKey": keys["secret"],
                        "SessionToken": keys["token"],
                    },
                    "AssumedRoleUser": {"Trn": "trn:sts::2100000000:assumed-role/trainer/x"},
                },
            }
        if query.get("Action") == ["AssumeRoleWithOIDC"]:  # Alibaba, RPC-style query
            keys = {"id": f"STS.rrsa{n}", "secret": f"rrsa-secret-{n}", "token": f"rrsa-token-{n}"}
            sts.issued.append(keys)
            return 200, {
                "RequestId": f"req-{n}",
                "Credentials": {
                    "AccessKeyId": keys["id"],
                    "AccessKeySecret": keys["secret"],
                    "SecurityToken": keys["token"],
                    "Expiration": _iso(time.time() + sts.lifetime_s),
                },
            }
        return 400, {"Code": "InvalidAction", "Message": f"not faked: {method} {path}"}

    return answer


@pytest.fixture
def fake_sts() -> Iterator[FakeSts]:
    sts = FakeSts(server=None)  # type: ignore[arg-type]
    sts.server = Fake(_answer(sts))
    thread = threading.Thread(target=sts.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sts
    finally:
        sts.server.shutdown()
        sts.server.server_close()
        thread.join(5)


def query_of(path: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(path.partition("?")[2]).items()}


def body_json(body: Any) -> dict[str, Any]:
    return body if isinstance(body, dict) else json.loads(body)
