#!/usr/bin/env bash
# Runs the README's install and agent lines as written, as a new user would paste them:
#   1. the "## Install" sh block, from the clone (cargo install into a temp root; with
#      CARGO_TARGET_DIR=target it reuses the release build, so it is quick when one exists);
#   2. the first sh block of "## Use it from an agent", in a fresh directory holding a
#      `my-notes` folder, with a fresh HOME (so `~` is new) and the installed binary first on
#      PATH. `claude` there is a stand-in that stores the argv Claude Code would store; the
#      official MCP Python SDK then starts that argv with no shell, as Claude Code does, and
#      searches and gets a note;
#   3. the Cursor JSON block, started the same way;
#   4. the Node block (the package's bin, installed globally into a temp prefix with an
#      empty npm cache), then the same argv again, now served by the npm bin;
#   5. the "## In Rust" lines: a fresh cargo project depending on the crate by path runs
#      the README's src/main.rs (scripts/readme-rust-test.sh).
# Needs what scripts/setup.sh and scripts/wasm-setup.sh install.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf 'readme-test: %s\n' "$*"; }
fail() {
  printf 'readme-test: FAILED: %s\n' "$*" >&2
  exit 1
}

# block <heading> <lang> <n>: the README's fenced blocks.
source scripts/readme-blocks.sh

install=$(block '## Install' sh 1)
agent=$(block '## Use it from an agent' sh 1)
cursor=$(block '## Use it from an agent' json 1)
node=$(block '## Use it from an agent' sh 2)
[[ $install == *"cargo install"* ]] || fail "no cargo install line under ## Install"
[[ $agent == *"langonrock import"* && $agent == *"claude mcp add"* ]] || fail "no agent lines"
[[ -n $cursor && $node == *"npm install --global"* ]] || fail "no Cursor or Node block"

say "install: $install"
(CARGO_INSTALL_ROOT="$tmp/cargo" CARGO_TARGET_DIR="$repo/target" bash -euo pipefail -c "$install")
[ -x "$tmp/cargo/bin/langonrock" ] || fail "the install line installed no langonrock"

# A fresh directory with a folder of notes, as a user has: flat, one without frontmatter.
work="$tmp/work"
mkdir -p "$work/my-notes" "$tmp/home" "$tmp/bin"
printf '# Groceries\n\nMilk, eggs and bread for the weekend.\n' > "$work/my-notes/groceries.md"
printf -- '---\ntype: note\n---\n# Garden\n\nWater the tomatoes; see [[groceries]].\n' > "$work/my-notes/garden.md"
cat > "$tmp/bin/claude" <<'EOF'
#!/usr/bin/env bash
# Stands in for `claude mcp add <name> -- <command> <args...>`: stores the argv as given.
[ "$1" = mcp ] && [ "$2" = add ] && [ "$4" = -- ] || { echo "claude stand-in: unexpected $*" >&2; exit 2; }
shift 4
printf '%s\0' "$@" > "$CLAUDE_ARGV"
EOF
chmod +x "$tmp/bin/claude"

say "agent lines, in a fresh directory:"
printf '%s\n' "$agent"
(cd "$work" && HOME="$tmp/home" CLAUDE_ARGV="$tmp/argv" PATH="$tmp/cargo/bin:$tmp/bin:$PATH" \
  bash -euo pipefail -c "$agent")
[ -d "$tmp/home/kb/tenants/acme" ] || fail "the import did not create ~/kb for tenant acme"
[ "$(tr '\0' '\n' < "$tmp/argv" | head -1)" = langonrock ] || fail "the stored command is not langonrock"
client=(python3 "$repo/node-mcp/tests/mcp_client/agent.py")
PATH="$tmp/cargo/bin:$PATH" "${client[@]}" --argv "$tmp/argv" "$tmp/home" "milk eggs" groceries
printf '%s\n' "$cursor" > "$tmp/mcp.json"
PATH="$tmp/cargo/bin:$PATH" "${client[@]}" --cursor "$tmp/mcp.json" "$tmp/home" "tomatoes" garden

say "Node lines, from the clone:"
printf '%s\n' "$node"
export npm_config_prefix="$tmp/npm" npm_config_cache="$tmp/npm-cache"
bash -euo pipefail -c "$node"
tarball=$(grep -o '/tmp/langonrock-[0-9.]*\.tgz' <<<"$node" | head -1)
rm -f "$tarball"
[ -x "$tmp/npm/bin/langonrock" ] || fail "the Node lines installed no langonrock bin"
[ "$(PATH="$tmp/npm/bin:$PATH" command -v langonrock)" = "$tmp/npm/bin/langonrock" ] || fail "PATH"
PATH="$tmp/npm/bin:$PATH" "${client[@]}" --argv "$tmp/argv" "$tmp/home" "milk eggs" groceries
bash scripts/readme-rust-test.sh
say "the README's lines work as written"
