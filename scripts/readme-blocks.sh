# Sourced by scripts/readme-test.sh and scripts/readme-rust-test.sh: the README's fenced
# blocks, read as a new user reads them.

# The <n>th fenced block of language <lang> in the section under heading <h> of README.md.
block() {
  awk -v h="$1" -v fence="\`\`\`$2" -v want="$3" '
    $0 == h { inside = 1; next }
    inside && /^## / { exit }
    inside && !code && $0 == fence { code = 1; n++; next }
    code && $0 == "```" { code = 0; if (n == want) exit; next }
    code && n == want { print }
  ' README.md
}
