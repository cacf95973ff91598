"""Whole layers and models: parallelism schemes, rooflines, training, serving and transfers.

:mod:`.schemes` costs an MLP layer under DP, FSDP, TP and FSDP + TP, :mod:`.networked` its
collectives through a GPU network's levels (NVLink, scale-out, spine), :mod:`.parallelism` the
compute-bound conditions of each scheme (rooflines: the :class:`~.bounds.Roofline` value and the
closed-form solving in :mod:`.bounds`, a GPU slice's reach in :mod:`.roofline_network`, a given
batch on a given slice in :mod:`.verdicts`), :mod:`.transformer` a model's parameters
and FLOPs from its configuration (with the presets), :mod:`.training` a training run,
:mod:`.inference` serving (the KV cache, prefill and decode), :mod:`.step_kernels` the kernels one chip runs
in a step (their expected time on a calibrated chip), :mod:`.transfers` moving bytes across
a slice, its hosts and the data-centre network, and :mod:`.worked` the book's worked answers
recomputed.

It may import every layer below it, :mod:`symshard.planning` included; the presentation (words,
reports, figures) sits above it.
"""
