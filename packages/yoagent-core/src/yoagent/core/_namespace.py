"""What every public namespace of ``yoagent.core`` does alike: names made on first use,
names that moved elsewhere (a deprecation alias each), and exceptions named publicly.

A namespace (``yoagent.core``, ``yoagent.core.extension``, ...) imports its eager names,
then ends with::

    _names = Namespace(__name__, globals(), lazy={...}, moved={...})
    __getattr__ = _names.getattr
    __dir__ = _names.dir
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

PACKAGE = "yoagent.core"
_PRIVATE = PACKAGE + "._"
_ALIAS_REMOVED_IN = "yoagent-core 0.3"
NAMESPACES = (
    PACKAGE,
    f"{PACKAGE}.session",
    f"{PACKAGE}.state",
    f"{PACKAGE}.provider",
    f"{PACKAGE}.extension",
    f"{PACKAGE}.loop",
    f"{PACKAGE}.context",
    f"{PACKAGE}.support",
)
"""The public namespaces, in the order that decides an exception's public name."""


def name_exceptions(namespace: str, values: Iterable[object]) -> None:
    """Exceptions defined in a private module are named by the public ``namespace``
    (tracebacks and reprs show ``yoagent.core.RunFailedError``, as httpx does); the first
    namespace to publish one names it. Only exceptions: pydantic resolves the dataclasses'
    annotations through their defining module."""
    for value in values:
        if (
            isinstance(value, type)
            and issubclass(value, BaseException)
            and value.__module__.startswith(_PRIVATE)
        ):
            value.__module__ = namespace


def _public_home(name: str) -> str | None:
    """The first public namespace that exports ``name``."""
    for namespace in NAMESPACES:
        module = sys.modules.get(namespace) or importlib.import_module(namespace)
        if name in getattr(module, "__all__", ()):
            return namespace
    return None


def name_module_exceptions(module: object) -> None:
    """Name each exception ``module`` defines by the public namespace that exports it (for
    a module loaded on first use, whose exceptions no namespace named at import)."""
    for value in list(vars(module).values()):
        if (
            isinstance(value, type)
            and issubclass(value, BaseException)
            and value.__module__.startswith(_PRIVATE)
        ):
            home = _public_home(value.__name__)
            if home is not None:
                value.__module__ = home


def _installed(module: str) -> bool:
    """Whether the top-level ``module`` can be imported (found, not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules without a spec
        return sys.modules.get(module) is not None


class Namespace:
    """The names of one public namespace that are not plain globals.

    ``lazy`` maps a name to the private module (relative to ``yoagent.core``) that defines
    it, imported on first use: modules that define a pydantic model at import (the first
    one a process defines costs ≈ 30–60 ms, which ``import yoagent.core`` need not pay),
    or that only some programs use. ``moved`` maps a name that used to live here to the
    namespace that holds it now: reading it warns (``DeprecationWarning``) and gives the
    same object. ``needs`` maps a lazy module to the extra that installs what it imports:
    while that is missing, its names are left out of ``__all__`` and ``dir()`` (a star
    import and a walk over ``__all__`` see what can load), and reading one raises
    :class:`ModuleNotFoundError` naming the extra. (An error that is also an
    ``AttributeError``, for ``hasattr``, cannot be made: the two built-in classes have
    conflicting layouts; and ``from … import name`` turns an ``AttributeError`` into a
    bare "cannot import name", losing the hint.)
    """

    __slots__ = ("_absent", "_globals", "_lazy", "_moved", "_name", "_needs")

    def __init__(
        self,
        name: str,
        namespace: dict[str, Any],
        *,
        lazy: Mapping[str, str] | None = None,
        moved: Mapping[str, str] | None = None,
        needs: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        self._name = name
        self._globals = namespace
        self._lazy = dict(lazy or {})
        self._moved = dict(moved or {})
        self._needs = dict(needs or {})
        missing = {module for module, (top, _) in self._needs.items() if not _installed(top)}
        self._absent = {name for name, module in self._lazy.items() if module in missing}
        if self._absent and "__all__" in namespace:
            namespace["__all__"] = [n for n in namespace["__all__"] if n not in self._absent]
        name_exceptions(
            name, [namespace[n] for n in namespace.get("__all__", ()) if n in namespace]
        )

    def getattr(self, name: str) -> object:
        """A lazy name (imported now), or a moved one (with a deprecation warning)."""
        module = self._lazy.get(name)
        if module is not None:
            self._load(name, module)
            self._publish_loaded()
            return self._globals[name]
        home = self._moved.get(name)
        if home is not None:
            warnings.warn(
                f"{self._name}.{name} moved to {home}.{name}: import it from there "
                f"(the old name goes in {_ALIAS_REMOVED_IN})",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(home), name)
        raise AttributeError(f"module {self._name!r} has no attribute {name!r}")

    def dir(self) -> list[str]:
        """The namespace's names, those made on first use included (for completion and
        help); moved names are not listed."""
        return sorted({*self._globals, *self._lazy} - self._absent)

    def _load(self, name: str, module: str) -> None:
        try:
            importlib.import_module(module, PACKAGE)
        except ModuleNotFoundError as error:
            needed = self._needs.get(module)
            if needed is None or error.name != needed[0]:
                raise
            raise ModuleNotFoundError(
                f"{self._name}.{name} needs {needed[0]}: pip install '{needed[1]}'",
                name=needed[0],
            ) from None

    def _publish_loaded(self) -> None:
        """Every lazy name whose module is loaded now (the one just asked for, or one it
        imported) becomes a global, and every exception of those modules is named
        publicly: ``from yoagent.core import Session`` names
        ``yoagent.core.session.SessionCorruptError`` too."""
        for module in set(self._lazy.values()):
            loaded = sys.modules.get(PACKAGE + module)
            if loaded is not None:
                name_module_exceptions(loaded)
        for name, module in self._lazy.items():
            loaded = sys.modules.get(PACKAGE + module)
            if name not in self._globals and loaded is not None:
                self._globals[name] = getattr(loaded, name)
