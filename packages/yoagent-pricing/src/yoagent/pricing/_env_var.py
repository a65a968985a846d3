"""The ``YOAGENT_PRICES`` variable's name, on its own: the autoload entry point reads it
without loading the price layers."""

PRICES_ENV_VAR = "YOAGENT_PRICES"
"""A price file's path, or the file's JSON itself (starting with ``{``): the user layer."""
