"""The problem families symshard knows, found by name: the built-in ones, those in ``$SYMSHARD_FAMILIES``
and those in folders a caller adds.

Part of :mod:`symshard.problems`: it finds the family folders (nothing is loaded until asked) and
loads each family once per change of its ``family.toml`` (:mod:`~symshard.problems.family` reads a
folder); :mod:`~symshard.problems.engine` draws from what it finds. A family never replaces another.

Examples:
    >>> "allgather-time" in family_folders(), family("allgather-time").difficulty
    (True, 'medium')
"""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import TemplateError, did_you_mean
from ..messages import say
from .family import FAMILY_NAME, Family, load_family

__all__ = ["families", "family", "family_folders", "load_cached"]


def _builtin_root() -> Path:
    try:
        return Path(str(importlib.resources.files("symshard.families")))
    except ModuleNotFoundError:  # a source tree that was never installed: the families sit beside the package
        return Path(__file__).resolve().parents[2] / "problems"


def _roots(extra: Iterable[Path | str] = ()) -> list[Path]:
    roots = [_builtin_root()]
    env_dirs = os.environ.get("SYMSHARD_FAMILIES", "")
    roots += [Path(p) for p in env_dirs.split(os.pathsep) if p]
    roots += [Path(p) for p in extra]
    return roots


def family_folders(extra: Iterable[Path | str] = ()) -> dict[str, Path]:
    """Every family folder, by name; nothing is loaded yet.

    A family never replaces another: two folders with one name (a family in ``$SYMSHARD_FAMILIES``
    or ``extra`` called like a built-in one, or like one in another folder) are refused, so that
    a set or a page never shows someone else's family under a name it trusts.

    Raises:
        TemplateError: a family root that does not exist, a family folder whose name is not a
            family's name, or two families with one name.
    """
    found: dict[str, Path] = {}
    for root in _roots(extra):
        if not root.is_dir():
            raise TemplateError(
                say("family folder '{path}' does not exist", path=str(root)),
                hint=say("point at a folder of family folders"),
            )
        for sub in sorted(root.iterdir()):
            # a family is a real folder of the root: a link to a folder elsewhere is not followed
            if not (sub.is_dir() and not sub.is_symlink() and (sub / "family.toml").exists()):
                continue
            if not FAMILY_NAME.match(sub.name):
                raise TemplateError(
                    say("the family folder '{path}' has a name that is not a family's name", path=str(sub)),
                    hint=say("rename it: a letter, then letters, digits, '-' or '_' (at most 80 characters)"),
                )
            path = sub.absolute()  # the worker may run in another folder later
            known = found.get(sub.name)
            if known is not None and not _same_folder(known, path):
                raise TemplateError(
                    say("two problem families are called '{name}': '{first}' and '{second}'",
                        name=sub.name, first=str(known), second=str(path)),
                    hint=say("rename one of the folders: a family never replaces another, a built-in one included"),
                )  # fmt: skip
            found[sub.name] = path
    return dict(sorted(found.items()))


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def families(extra: Iterable[Path | str] = ()) -> dict[str, Family]:
    """Every family, by name: the built-in ones, those in ``$SYMSHARD_FAMILIES`` and in ``extra``.

    Raises:
        TemplateError: a family folder whose spec is broken.
    """
    return {name: load_cached(path) for name, path in family_folders(extra).items()}


_LOADED: dict[tuple[Path, float], Family] = {}


def load_cached(path: Path) -> Family:
    """The family in the folder ``path``, loaded once for each version of its ``family.toml``."""
    try:
        stamp = (path, os.lstat(path / "family.toml").st_mtime_ns)
    except OSError:
        return load_family(path)  # it reports the missing file
    if stamp not in _LOADED:
        _LOADED[stamp] = load_family(path)
    return _LOADED[stamp]


def family(name: str, extra: Iterable[Path | str] = ()) -> Family:
    """The family called ``name``.

    Raises:
        TemplateError: no such family.
    """
    folders = family_folders(extra)
    if name not in folders:
        raise TemplateError(say("unknown problem family '{name}'", name=name), hint=did_you_mean(name, list(folders)))
    return load_cached(folders[name])
