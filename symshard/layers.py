"""symshard's layers, from the bottom: the packages each one holds, in the order imports must follow.

A module may import only from its own layer or those below it, and no module takes another's
private names; ``tests/test_architecture.py`` checks both on the import graph, and the docs page
"How symshard is built" draws its map from this table, so the rule and its description cannot
drift apart. A name ending in ``.*`` stands for a package and all its modules.

Examples:
    >>> [layer.name for layer in LAYERS][:4]
    ['foundation', 'algebra', 'notation', 'machines']
    >>> layer_of("symshard.planning.routes").name
    'planning'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FACES", "LAYERS", "Layer", "layer_of"]


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer: its name and the modules or packages (``name.*``) it holds, relative to ``symshard``."""

    name: str
    members: tuple[str, ...]

    def holds(self, module: str) -> bool:
        """Whether ``module`` (``symshard.x.y``) belongs to this layer."""
        short = module.removeprefix("symshard.")
        return any(
            short == m or (m.endswith(".*") and (short == m[:-2] or short.startswith(m[:-1]))) for m in self.members
        )


LAYERS: tuple[Layer, ...] = (
    Layer("foundation", ("errors", "messages", "memo", "outputs.*", "inputs", "tomltext", "layers", "shown")),
    Layer("algebra", ("algebra.*",)),
    Layer("notation", ("notation.*",)),
    Layer("machines", ("machines.*",)),
    Layer("costs", ("costs.*",)),
    Layer("reading", ("read",)),
    Layer("planning", ("planning.*",)),
    Layer("models", ("models.*",)),
    Layer("bridge", ("jax.*",)),
    Layer("presentation", ("i18n.*", "report.*", "render.*", "notebook")),
    Layer("problems", ("problems.*",)),
    Layer("site", ("site.*",)),
    Layer("cli", ("cli.*",)),
)
"""The layers, from the bottom."""

FACES = frozenset({"symshard", "symshard.jax", "symshard.__main__"})
"""The package faces: re-exports for users (``import symshard as ss``, ``symshard.jax``), outside the layers."""


def layer_of(module: str) -> Layer | None:
    """The layer of ``module`` (``symshard.costs.placement``), None for a face or a module in no layer."""
    if module in FACES:
        return None
    return next((layer for layer in LAYERS if layer.holds(module)), None)
