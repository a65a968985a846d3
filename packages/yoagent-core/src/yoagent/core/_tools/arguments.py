"""ToolArguments, the base for argument models, in its own module.

Defining the first pydantic model of a process costs ≈ 30–60 ms (pydantic loads its
plugins through ``importlib.metadata`` then): ``yoagent.core`` imports this module on
first use of the name, so an application that never touches it does not pay that at
import.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolArguments(BaseModel):
    """A convenient base for argument models: unknown keys are refused, values coerced (lax)."""

    model_config = ConfigDict(extra="forbid")
