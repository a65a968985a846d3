"""MCP servers and pricing in the config file and on the command line, and which tools ask
first: parsing and checks, without starting anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from yoagent.cli.confirm import ConfirmMiddleware, describe
from yoagent.cli.mcp_config import McpServerSpec, config_servers, flag_servers
from yoagent.cli.mcp_servers import ConnectedServer, McpServers, _prefix  # pyright: ignore[reportPrivateUsage]
from yoagent.cli.prices import PricingMode
from yoagent.cli.settings import SettingsError, load_settings
from yoagent.core import Allow, Deny, ToolCallRequest
from yoagent.mcp import McpClient, McpToolSource

SECRET = "k3y-0123456789abcdef"


def settings_from(tmp_path: Path, user: str, project: str | None = None):
    user_file = tmp_path / "user.toml"
    user_file.write_text(user)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    if project is not None:
        (work / ".yoagent").mkdir(exist_ok=True)
        (work / ".yoagent" / "config.toml").write_text(project)
    return load_settings(work, user_file=user_file)


def test_mcp_flags_split_like_a_shell_and_name_servers_without_their_options() -> None:
    specs = flag_servers(
        [
            "npx -y '@scope/server everything' --token abc",
            "python server.py",
            f"gh-mcp --token {SECRET}",
            "python -c 'import server'",
        ],
        ["https://mcp.example.com/secret-path-12345/mcp"],
    )
    assert specs[0].argv == ("npx", "-y", "@scope/server everything", "--token", "abc")
    assert [spec.label for spec in specs] == [
        "npx",
        "python server.py",
        "gh-mcp",  # an option's value is never a name: it may be a key
        "python",
        "https://mcp.example.com",
    ]
    assert all(spec.name is None and spec.confirm for spec in specs)
    assert "secret-path" not in repr(specs[4]) and SECRET not in repr(specs[2])


@pytest.mark.parametrize(
    ("commands", "urls", "problem"),
    [
        (["  "], [], "--mcp needs a command"),
        (["python 'unclosed"], [], "No closing quotation"),
        ([], [f"mcp.example.com/{SECRET}"], "--mcp-http: the URL must start with http://"),
        ([], [f"file:///{SECRET}"], "--mcp-http: the URL must start with http://"),
    ],
)
def test_bad_mcp_flags_are_usage_errors(commands: list[str], urls: list[str], problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as caught:
        flag_servers(commands, urls)
    assert SECRET not in str(caught.value)


def test_config_servers_read_variables_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_MCP_TOKEN", SECRET)
    loaded = settings_from(
        tmp_path,
        '[mcp_servers.gh]\ncommand = "gh-mcp"\nargs = ["--token", "${TEST_MCP_TOKEN}"]\n'
        'env = { GH_TOKEN = "Bearer ${TEST_MCP_TOKEN}" }\n'
        "[mcp_servers.docs]\n"
        'url = "https://docs.example/mcp?key=${TEST_MCP_TOKEN}"\n'
        'headers = { Authorization = "Bearer ${TEST_MCP_TOKEN}" }\nconfirm = false\n'
        '[mcp_servers.off]\ncommand = "x"\nenabled = false\n',
    )
    gh, docs = config_servers(loaded.settings, loaded.user_file)
    assert (gh.name, gh.source, gh.argv) == ("gh", "config", ("gh-mcp", "--token", SECRET))
    assert gh.env == {"GH_TOKEN": f"Bearer {SECRET}"} and gh.confirm
    assert docs.url == f"https://docs.example/mcp?key={SECRET}"
    assert docs.headers == {"Authorization": f"Bearer {SECRET}"} and not docs.confirm
    assert SECRET not in repr(gh) + repr(docs)


def test_a_missing_variable_names_the_key_never_a_value(tmp_path: Path) -> None:
    loaded = settings_from(
        tmp_path, '[mcp_servers.gh]\ncommand = "gh-mcp"\nargs = ["${NO_SUCH_VAR_Q}"]\n'
    )
    with pytest.raises(SettingsError) as caught:
        config_servers(loaded.settings, loaded.user_file)
    assert str(caught.value) == (
        f"{tmp_path / 'user.toml'}: mcp_servers.gh.args[0]: ${{NO_SUCH_VAR_Q}} is not set "
        "in the environment"
    )


def test_pricing_keys_and_which_ones_a_project_may_set(tmp_path: Path) -> None:
    loaded = settings_from(
        tmp_path,
        'pricing = "live"\nprices_url = "https://prices.example/p.json"\n',
        project='pricing = "off"\nprices_url = "https://evil.example/p.json"\n'
        '[mcp_servers.x]\ncommand = "x"\n',
    )
    assert loaded.settings.pricing is PricingMode.OFF  # the project wins where it may
    assert loaded.settings.prices_url == "https://prices.example/p.json"
    assert loaded.settings.mcp_servers == {}
    ignored = [w for w in loaded.warnings if "only read from the user config" in w]
    assert len(ignored) == 2
    assert "'mcp_servers'" in ignored[0] and "'prices_url'" in ignored[1]


def test_unknown_keys_in_a_server_table_are_warnings(tmp_path: Path) -> None:
    loaded = settings_from(tmp_path, '[mcp_servers.gh]\ncommand = "gh-mcp"\nagrs = ["x"]\n')
    assert loaded.warnings == [
        f"{tmp_path / 'user.toml'}: unknown key 'mcp_servers.gh.agrs' (ignored)"
    ]


@pytest.mark.parametrize(
    ("user", "problem"),
    [
        ('pricing = "cheap"', "pricing: Input should be 'bundled', 'live' or 'off'"),
        ('prices_url = "prices.json"', "prices_url: the URL must start with http://"),
        ('[mcp_servers.x]\nurl = "https://h/mcp"\nargs = ["a"]', "args and env go with command"),
        ('[mcp_servers.x]\ncommand = "x"\nheaders = { A = "b" }', "headers go with url"),
        ('[mcp_servers.x]\ncommand = ""', "mcp_servers.x.command: String should have at least"),
        (f'[mcp_servers.{"a" * 33}]\ncommand = "x"', "a server's name is up to 32"),
    ],
)
def test_bad_pricing_and_server_values_name_the_key(
    tmp_path: Path, user: str, problem: str
) -> None:
    with pytest.raises(SettingsError, match=problem.replace("(", r"\(")):
        settings_from(tmp_path, user + "\n")


def test_everything_but_reading_asks_first_unless_trusted() -> None:
    confirm = ConfirmMiddleware(None, trusted=lambda name: name.startswith("docs__"))
    for name in ("read_file", "list_files", "search", "read_skill", "docs__lookup"):
        assert not confirm.guards(name)
    for name in ("bash", "write_file", "edit_file", "notes__add_note", "some_new_tool"):
        assert confirm.guards(name)


async def test_an_mcp_call_is_described_with_its_whole_arguments_and_refused_without_yes() -> None:
    request = ToolCallRequest(
        tool_call_id="1", tool_name="notes__add_note", arguments={"text": "a\nb", "tags": ["x"]}
    )
    assert describe(request) == (
        'call notes__add_note with {\n  "text": "a\\nb",\n  "tags": [\n    "x"\n  ]\n}'
    )
    refused = await ConfirmMiddleware(None)(request)
    assert isinstance(refused, Deny) and "not allowed in a non-interactive run" in refused.reason
    assert isinstance(await ConfirmMiddleware(None, assume_yes=True)(request), Allow)


def _connected(name: str | None, prefix: str, confirm: bool) -> ConnectedServer:
    spec = McpServerSpec(name=name, source="config", argv=("x",), confirm=confirm)
    client = McpClient.stdio("x")  # never entered: nothing starts
    source = McpToolSource(client, prefix=prefix)
    return ConnectedServer(spec, prefix, client, source, 0)


def test_only_a_confirm_false_servers_own_tools_are_trusted() -> None:
    servers = McpServers([_connected("docs", "docs", False), _connected(None, "notes", True)])
    assert servers.trusted("docs__lookup")
    assert not servers.trusted("notes__add_note")
    assert not servers.trusted("docs")  # no separator: not one of its tools
    assert not servers.trusted("docs_2__lookup")
    assert servers.summary() == "docs (0 tools), notes (0 tools)"


def test_a_flag_servers_prefix_is_its_own_name_made_safe_and_unique() -> None:
    spec = McpServerSpec(name=None, source="--mcp", argv=("python", "server.py"))
    assert _prefix("notes", spec, set()) == "notes"
    assert _prefix("My Server!/v2", spec, set()) == "My_Server_v2"
    assert _prefix("a__b", spec, set()) == "a_b"  # never the tools' separator
    assert _prefix("notes", spec, {"notes", "notes_2"}) == "notes_3"
    assert _prefix(None, spec, set()) == "python_server_py"
    assert _prefix("!!!", spec, set()) == "mcp"
