"""Checking symshard against JAX and XLA (the ``jax`` extra: ``pip install 'symshard[jax]'``).

- :mod:`~symshard.jax.interop`: the notation as ``PartitionSpec`` / ``NamedSharding``, meshes both ways;
- :mod:`~symshard.jax.execution`: a strategy's steps run under ``shard_map``, checked against the product;
- :mod:`~symshard.jax.hlo`: the collectives in XLA's compiled HLO (printed with every constant);
- :mod:`~symshard.jax.verification`: the check of one matmul (``sample``, ``time_limit``, strategies that
  cannot run), made of :mod:`~symshard.jax.xla_plans` (XLA's plan in symshard's terms),
  :mod:`~symshard.jax.matching` (XLA's plan among symshard's strategies, or why not),
  :mod:`~symshard.jax.searches` (the searches beyond the listing, axes in parts), :mod:`~symshard.jax.running`
  (which strategies run) and :mod:`~symshard.jax.results` (the report);
- :mod:`~symshard.jax.sweeps`: many einsums, shardings and meshes, the docs page's data.

Importing this package does not import JAX; its functions load it when called.
On a CPU, JAX needs ``XLA_FLAGS=--xla_force_host_platform_device_count=16`` (set before
JAX is imported) to simulate 16 devices; :func:`configure_host_devices` sets it.

Examples:
    >>> import symshard.jax as sj
    >>> v = sj.verify("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "X=4,Y=2", "I=64,J=64,K=64")  # doctest: +SKIP
    >>> v.match, v.rank, v.matched  # doctest: +SKIP
    (True, 1, 'matmul → ReduceScatter_{X,K}(C)')
"""

from __future__ import annotations

# None of these modules imports JAX at import time; each function loads it when called.
# (The names are bound here, not lazily, so that each one is the function or class, never a submodule.)
from .execution import Execution, execute
from .hlo import collectives
from .interop import array_from_sharding, array_from_spec, jax_mesh, mesh_from_jax, named_sharding, partition_spec
from .results import Verification
from .runtime import configure_host_devices
from .sweeps import Sweep, sweep
from .verification import verify
from .xla_plans import xla_plan

__all__ = [
    "Execution",
    "Sweep",
    "Verification",
    "array_from_sharding",
    "array_from_spec",
    "collectives",
    "configure_host_devices",
    "execute",
    "jax_mesh",
    "mesh_from_jax",
    "named_sharding",
    "partition_spec",
    "sweep",
    "verify",
    "xla_plan",
]
