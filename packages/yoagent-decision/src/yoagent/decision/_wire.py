"""What the wire models of every backend share: lenient pydantic models and JSON numbers."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Number = Annotated[float, Field(strict=True)]
"""A JSON number (an int is fine; a string or a boolean is not). NaN passes here and is
refused by the answer check."""
Count = Annotated[int, Field(strict=True, ge=0)]
"""A token count."""


class WireModel(BaseModel):
    """A response part as a server sends it: unknown fields ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)
