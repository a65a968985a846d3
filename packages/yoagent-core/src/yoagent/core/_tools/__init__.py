"""The tool contract, ``@tool`` functions and tool sources."""
