"""Every key variable the providers read is kept from the bash tool's commands.

The providers' vendor table says where each key lives; the bash tool scrubs variables
by name pattern. A vendor added with a key variable no pattern matches would hand its
key to every command (one `env` puts it into the conversation and the session file):
this test fails then.
"""

from __future__ import annotations

import pytest

from yoagent.core import ToolContext
from yoagent.providers.models import VENDORS, key_variables_for
from yoagent.tools import BashTool
from yoagent.tools.bash import is_secret_variable


def _key_variables() -> list[str]:
    """Every variable a key is read from, for every vendor (and the generic fallbacks)."""
    found = {
        variable
        for provider in [*VENDORS, "a-provider-the-table-does-not-know"]
        for variable in key_variables_for(provider)
    }
    return sorted(found)


def test_the_vendor_table_names_key_variables() -> None:
    variables = _key_variables()
    assert "ANTHROPIC_API_KEY" in variables and "GOOGLE_CLOUD_ACCESS_TOKEN" in variables


@pytest.mark.parametrize("variable", _key_variables())
def test_every_provider_key_variable_matches_the_scrub_rule(variable: str) -> None:
    assert is_secret_variable(variable), f"{variable} would reach bash commands"


async def test_no_provider_key_reaches_a_command(monkeypatch: pytest.MonkeyPatch) -> None:
    for index, variable in enumerate(_key_variables()):
        monkeypatch.setenv(variable, f"secret-value-{index}-of-{variable}")
    context = ToolContext(tool_call_id="call-1", tool_name="bash")
    result = await BashTool().execute({"command": "env"}, context)
    assert "secret-value-" not in result.text
