# The real parts some packages' tests run against, installed where they are missing:
# bubblewrap (yoagent-tools' command sandbox), the MCP peers from npm (yoagent-mcp),
# PostgreSQL's binaries (yoagent-dbos), the AG-UI and AI SDK clients from npm and a chromium
# (yoagent-ui). A part that makes its tests skip when it is missing also exports the variable
# that makes them fail instead, so a run that was meant to have it never passes without it.
#
# .ci/run sources this file and installs every part (`install_parts`). The mutation
# workflows run it for the package they mutate, before staging it:
#     bash .ci/parts.sh yoagent-ui
# (on GitHub it also writes the exported variables to $GITHUB_ENV for the steps after it):
# a mutant reached only by a test that skipped would survive and lower the score.
# Packages not named here need nothing but `uv sync`.

if ! declare -F section >/dev/null; then
  section() { printf '\n==> %s\n' "$*"; }
fi

_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

_apt_install() {
  _as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  _as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

_export() { # _export NAME=VALUE: for this shell, and for later GitHub steps
  export "${1?}"
  if [ -n "${GITHUB_ENV:-}" ]; then printf '%s\n' "$1" >>"$GITHUB_ENV"; fi
}

_npm_ci() {
  npm ci --prefix "$1" --no-audit --no-fund --loglevel=error
}

# yoagent-tools: its command sandbox tests run under Landlock and under bubblewrap; with
# YOAGENT_REQUIRE_SANDBOX set, a mechanism that does not work here fails them.
part_yoagent_tools() {
  [ "$(uname -s)" = Linux ] || return 0
  section "bubblewrap (the command sandbox's tests)"
  command -v bwrap >/dev/null 2>&1 || _apt_install bubblewrap
  bwrap --version
  _export YOAGENT_REQUIRE_SANDBOX=1
}

# yoagent-mcp: real MCP servers and clients in Node for its tests.
part_yoagent_mcp() {
  section "npm ci --prefix packages/yoagent-mcp/tests/npm (MCP test peers)"
  _npm_ci packages/yoagent-mcp/tests/npm
}

# yoagent-dbos: PostgreSQL's binaries (its tests start their own server on a free loopback
# port, as the postgres user); required, so those tests never skip.
part_yoagent_dbos() {
  section "PostgreSQL binaries (yoagent-dbos tests)"
  if ! command -v pg_ctl >/dev/null 2>&1 &&
    ! compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
    _apt_install postgresql
  fi
  _export YOAGENT_DBOS_REQUIRE_POSTGRES=1
}

# yoagent-ui: the protocols' official clients (@ag-ui/client, ai) with a Node >= 22 from
# npm, and the chromium the web app's browser tests drive through Playwright's Python
# package by its path (Playwright's own browser download is never used). Debian's package;
# $CHROMIUM names another build where there is none (GitHub's Ubuntu runners: their Chrome).
part_yoagent_ui() {
  section "npm ci --prefix integrations/yoagent-ui/tests/npm (AG-UI and AI SDK test clients)"
  _npm_ci integrations/yoagent-ui/tests/npm
  section "chromium (yoagent-ui web app browser tests)"
  if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
    _apt_install chromium fonts-dejavu-core
  fi
  "${CHROMIUM:-/usr/bin/chromium}" --version
}

install_parts() { # install_parts [PACKAGE...]: the parts of those packages, else of all
  local package part
  if [ $# -eq 0 ]; then
    for part in $(compgen -A function part_); do "$part"; done
    return
  fi
  for package; do
    part="part_${package//-/_}"
    if declare -F "$part" >/dev/null; then "$part"; fi
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  install_parts "$@"
fi
