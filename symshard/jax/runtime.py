"""Loading JAX on demand, with enough (simulated) devices.

Nothing in :mod:`symshard.jax` imports JAX when the module is imported: the
modules stay importable (and their doctests collectable) without the ``jax``
extra, and a caller can still choose the number of host devices, which XLA reads
from ``XLA_FLAGS`` once, when JAX initialises its CPU backend.
"""

from __future__ import annotations

import os
import re
import sys
from types import ModuleType

from ..errors import MeshError, UsageError
from ..messages import say

__all__ = ["DEVICE_FLAG", "configure_host_devices", "require_devices", "require_jax"]

DEVICE_FLAG = "--xla_force_host_platform_device_count"
"""The XLA flag that makes the CPU backend expose several devices."""

_COUNT = re.compile(re.escape(DEVICE_FLAG) + r"=(\d+)")


def require_jax() -> ModuleType:
    """The ``jax`` module, or a :class:`~symshard.errors.UsageError` saying how to install it."""
    try:
        import jax
    except ImportError:
        raise UsageError(
            say("checking plans against JAX needs JAX, which is not installed"),
            hint=say("pip install 'symshard[jax]'"),
        ) from None
    return jax


def configure_host_devices(count: int) -> bool:
    """Ask XLA's CPU backend for at least ``count`` devices, if JAX has not started yet.

    Sets (or raises) ``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``.
    Returns False when JAX is already imported, since then the flag has been read.
    """
    if "jax" in sys.modules:
        return False
    flags = os.environ.get("XLA_FLAGS", "")
    found = _COUNT.search(flags)
    if found is None:
        flags = f"{flags} {DEVICE_FLAG}={count}".strip()
    elif int(found.group(1)) < count:
        flags = flags[: found.start()] + f"{DEVICE_FLAG}={count}" + flags[found.end() :]
    os.environ["XLA_FLAGS"] = flags
    return True


def require_devices(count: int) -> list:
    """The first ``count`` JAX devices, or a :class:`~symshard.errors.MeshError` with the fix."""
    jax = require_jax()
    devices = jax.devices()
    if len(devices) < count:
        raise MeshError(
            say(
                "the mesh needs {count} {count:device|devices} but JAX sees {seen} ({platform})",
                count=count,
                seen=len(devices),
                platform=devices[0].platform,
            ),
            hint=say(
                "set XLA_FLAGS={flag} in the environment before JAX is imported (on a CPU it simulates that many "
                "devices)",
                flag=f"{DEVICE_FLAG}={max(count, 8)}",
            ),
        )
    return list(devices[:count])
