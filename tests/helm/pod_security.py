"""The Kubernetes Pod Security Standards, "restricted" profile, as checks on a pod spec.

Follows the published policy (kubernetes.io/docs/concepts/security/pod-security-standards),
the baseline controls included, as the admission controller applies them at the latest
version: each function returns the violations it finds as readable lines, so a test can show
exactly which rule a manifest breaks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Spec = Mapping[str, Any]

RESTRICTED_VOLUME_TYPES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
ALLOWED_SECCOMP = frozenset({"RuntimeDefault", "Localhost"})
ALLOWED_APPARMOR = frozenset({"RuntimeDefault", "Localhost"})


def containers(pod: Spec) -> Iterator[Spec]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from pod.get(field) or []


def restricted_violations(pod: Spec) -> list[str]:
    """Every rule of the restricted profile that this pod spec breaks (empty: it passes)."""
    problems = _host_namespaces(pod) + _volumes(pod) + _pod_context(pod)
    for container in containers(pod):
        problems += [f"container {container['name']}: {p}" for p in _container(pod, container)]
    return problems


def _host_namespaces(pod: Spec) -> list[str]:
    return [f"{field} is true" for field in ("hostNetwork", "hostPID", "hostIPC") if pod.get(field)]


def _volumes(pod: Spec) -> list[str]:
    problems = []
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUME_TYPES:
            problems.append(f"volume {volume['name']} has type {sorted(kinds)}")
    return problems


def _pod_context(pod: Spec) -> list[str]:
    context = pod.get("securityContext") or {}
    problems = _common_context(context, "pod")
    unsafe = [s["name"] for s in context.get("sysctls") or [] if s["name"] not in SAFE_SYSCTLS]
    if unsafe:
        problems.append(f"pod sets unsafe sysctls {unsafe}")
    return problems


def _common_context(context: Spec, where: str) -> list[str]:
    """Rules that hold at pod and container level alike (when the field is set there)."""
    problems = []
    if context.get("runAsUser") == 0:
        problems.append(f"{where} runAsUser is 0")
    if context.get("runAsNonRoot") is False:
        problems.append(f"{where} runAsNonRoot is false")
    if (context.get("windowsOptions") or {}).get("hostProcess"):
        problems.append(f"{where} is a Windows host process")
    selinux = context.get("seLinuxOptions") or {}
    if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        problems.append(f"{where} seLinuxOptions {selinux} are not allowed")
    seccomp = (context.get("seccompProfile") or {}).get("type")
    if seccomp is not None and seccomp not in ALLOWED_SECCOMP:
        problems.append(f"{where} seccompProfile is {seccomp}")
    apparmor = (context.get("appArmorProfile") or {}).get("type")
    if apparmor is not None and apparmor not in ALLOWED_APPARMOR:
        problems.append(f"{where} appArmorProfile is {apparmor}")
    return problems


def _container(pod: Spec, container: Spec) -> list[str]:
    pod_context = pod.get("securityContext") or {}
    context = container.get("securityContext") or {}
    problems = _common_context(context, "container")
    if context.get("privileged"):
        problems.append("privileged")
    if context.get("allowPrivilegeEscalation") is not False:
        problems.append("allowPrivilegeEscalation is not false")
    if context.get("procMount", "Default") != "Default":
        problems.append(f"procMount is {context['procMount']}")
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        problems.append("capabilities do not drop ALL")
    added = set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}
    if added:
        problems.append(f"capabilities add {sorted(added)}")
    if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot", False)):
        problems.append("runAsNonRoot is not true (neither in the container nor the pod)")
    seccomp = context.get("seccompProfile") or pod_context.get("seccompProfile") or {}
    if seccomp.get("type") not in ALLOWED_SECCOMP:
        problems.append("no RuntimeDefault or Localhost seccompProfile (container or pod)")
    host_ports = [p["hostPort"] for p in container.get("ports") or [] if p.get("hostPort")]
    if host_ports:
        problems.append(f"hostPort {host_ports}")
    return problems
