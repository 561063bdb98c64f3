"""Drains this node when the cloud schedules its spot instance for reclaim.

Runs on each spot GPU node (a DaemonSet; this file travels in a ConfigMap and needs only the
standard library). ACK and TKE announce a reclaim in the instance metadata minutes ahead
(ECS: about 5 minutes) but, unlike EKS managed node groups, do not drain the node. Without a
drain the VM just disappears, and a training Job loses everything since its last periodic
checkpoint. With one, each pod is evicted (its containers get SIGTERM and their grace
period), so the trainer writes an emergency checkpoint and the Job, seeing DisruptionTarget,
starts a replacement pod that resumes from it.

Drain = mark the node unschedulable, then evict (Eviction API, so PodDisruptionBudgets and
grace periods hold) every pod on it that is not a DaemonSet's or a static pod.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
POLL_SECONDS = 5.0
TIMEOUT_SECONDS = 5.0
EVICTION_RETRY_SECONDS = 5.0
CHINA_STANDARD_TIME = dt.timezone(dt.timedelta(hours=8))
RECLAIM_TIME_FORMATS: tuple[tuple[str, dt.timezone | None], ...] = (
    # ECS (and EC2): ISO 8601 in UTC, e.g. 2015-01-05T18:02:00Z.
    ("%Y-%m-%dT%H:%M:%SZ", dt.timezone.utc),
    ("%Y-%m-%dT%H:%M:%S%z", None),
    # CVM: "2018-08-18 12:05:33", the instance's OS time in UTC+8
    # (https://intl.cloud.tencent.com/document/product/213/32487).
    ("%Y-%m-%d %H:%M:%S", CHINA_STANDARD_TIME),
)
"""How each cloud's metadata service writes the reclaim time."""


def parse_reclaim_time(body: str) -> dt.datetime | None:
    """The reclaim time in `body`, in any cloud's documented format; None if it is none."""
    text = body.strip()
    for pattern, zone in RECLAIM_TIME_FORMATS:
        try:
            when = dt.datetime.strptime(text, pattern)
        except ValueError:
            continue
        return when.replace(tzinfo=zone) if zone is not None else when
    return None


def log(message: str) -> None:
    print(f"spot-reclaim: {message}", file=sys.stderr, flush=True)


def reclaim_scheduled(env: Mapping[str, str]) -> str | None:
    """The reclaim time the metadata service announces, or None while there is none.

    Both clouds answer 404 (or an empty body) until a reclaim is scheduled, then a
    timestamp (`parse_reclaim_time` knows each cloud's format). Where `TOKEN_URL` is set
    (Alibaba's hardened metadata mode), a session token is fetched first; if that fails,
    the plain request is tried.
    """
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    headers: dict[str, str] = {}
    if env.get("TOKEN_URL"):
        request = urllib.request.Request(
            env["TOKEN_URL"], method="PUT", headers={env["TOKEN_TTL_HEADER"]: "60"}
        )
        try:
            with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                headers[env["TOKEN_HEADER"]] = response.read().decode().strip()
        except (urllib.error.URLError, OSError):
            pass  # normal metadata mode: no token needed
    try:
        request = urllib.request.Request(env["TERMINATION_TIME_URL"], headers=headers)
        with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            body = response.read(256).decode(errors="replace").strip()
    except urllib.error.HTTPError as error:
        if error.code != 404:
            log(f"metadata answered {error.code}")
        return None
    except (urllib.error.URLError, OSError) as error:
        log(f"metadata unreachable: {error}")
        return None
    return body if parse_reclaim_time(body) is not None else None


class KubernetesApi:
    """The few API calls a drain needs, with the pod's ServiceAccount token."""

    def __init__(self, base_url: str, token: str, context: ssl.SSLContext | None) -> None:
        self.base_url, self.token, self.context = base_url.rstrip("/"), token, context

    @classmethod
    def in_cluster(cls) -> KubernetesApi:
        host = os.environ["KUBERNETES_SERVICE_HOST"]
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        with open(f"{SERVICE_ACCOUNT}/token") as f:
            token = f.read().strip()
        context = ssl.create_default_context(cafile=f"{SERVICE_ACCOUNT}/ca.crt")
        return cls(f"https://{host}:{port}", token, context)

    def call(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": content_type},
        )
        try:
            with urllib.request.urlopen(
                request, timeout=TIMEOUT_SECONDS, context=self.context
            ) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, {}


def _evictable(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return False  # already going
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return False  # a static pod: the kubelet owns it
    owners = meta.get("ownerReferences") or []
    return not any(o.get("kind") == "DaemonSet" for o in owners)


def drain(
    api: KubernetesApi,
    node: str,
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    retry_seconds: float = EVICTION_RETRY_SECONDS,
) -> int:
    """Cordon `node` and evict its pods until all are evicted or `deadline`; pods left."""
    status, _ = api.call(
        "PATCH",
        f"/api/v1/nodes/{node}",
        {"spec": {"unschedulable": True}},
        "application/merge-patch+json",
    )
    log(f"cordoned {node} ({status})")
    selector = urllib.parse.quote(f"spec.nodeName={node}")
    pending: list[tuple[str, str]] | None = None
    while True:
        if pending is None:
            _, pods = api.call("GET", f"/api/v1/pods?fieldSelector={selector}")
            pending = [
                (p["metadata"]["namespace"], p["metadata"]["name"])
                for p in pods.get("items") or []
                if _evictable(p)
            ]
        left = []
        for namespace, name in pending:
            eviction = {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": name, "namespace": namespace},
            }
            path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
            status, _ = api.call("POST", path, eviction)
            if status in (200, 201, 404):
                log(f"evicted {namespace}/{name} ({status})")
            else:  # 429: a PodDisruptionBudget says not now; retry until the deadline
                left.append((namespace, name))
        pending = left
        if not pending or clock() >= deadline:
            return len(pending)
        time.sleep(retry_seconds)


def main() -> int:
    node = os.environ["NODE_NAME"]
    log(f"watching {os.environ['TERMINATION_TIME_URL']} for {node}")
    while True:
        when = reclaim_scheduled(os.environ)
        if when is not None:
            log(f"reclaim scheduled for {when}: draining {node}")
            # Keep trying for as long as the notice lasts; the VM goes at its end anyway.
            left = drain(KubernetesApi.in_cluster(), node, time.monotonic() + 300)
            log(f"drain finished, {left} pods not evicted")
            while True:  # the node is going away; nothing more to do
                time.sleep(3600)
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
