"""The build backend of the workspace root, which is not a package: every hook refuses.

The root pyproject.toml only gathers the workspace (``[tool.uv] package = false``). With no
``[build-system]`` at all, ``uv build`` or ``pip install .`` in the root would fall back to
setuptools and fail with an error that names nothing of ours; this backend says instead
how the packages are built.
"""

from __future__ import annotations

from typing import Any, NoReturn

MESSAGE = (
    "the root of the yoagent workspace is not a package. Build the packages instead: "
    "`uv build --all-packages` (every package's wheel and sdist into dist/) or "
    "`uv build --package yoagent-core`; install one from a clone with "
    "`uv pip install ./packages/yoagent-core` or `uv tool install ./integrations/yoagent-cli`."
)


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise SystemExit(f"error: {MESSAGE}")


get_requires_for_build_wheel = _refuse
get_requires_for_build_sdist = _refuse
get_requires_for_build_editable = _refuse
prepare_metadata_for_build_wheel = _refuse
prepare_metadata_for_build_editable = _refuse
build_wheel = _refuse
build_sdist = _refuse
build_editable = _refuse
