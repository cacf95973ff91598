"""The machines: chips and their figures, meshes, how axes are wired, and the networks above them.

It owns the chip model (:mod:`.chips`), the hardware presets with a source for every figure and the
hardware files (:mod:`.presets`), NCCL's latency table (:mod:`.nccl`), a mesh of named axes
(:mod:`.mesh`) and axes taken in parts (:mod:`.subaxes`), the wiring of one axis (ring, line,
switch: :mod:`.topology`) and a GPU network's levels (NVLink domain, scale-out, leaf and spine:
:mod:`.network`). Nothing here costs anything: it states what the machine is, and
:mod:`symshard.costs` prices work on it.

It may import the foundation, :mod:`symshard.algebra` and :mod:`symshard.notation`.
"""
