//! End-to-end MCP tests: the real binary, driven by the official MCP Python SDK
//! (`tests/mcp_client/e2e.py`; `pip install mcp`, which `scripts/setup.sh` does).

mod common;

use common::TempDir;

#[test]
fn python_sdk_drives_every_tool() {
    let dir = TempDir::new("mcp-e2e");
    let data = dir.path().join("data");
    let exp = dir.path().join("expected.json");
    let modes = [
        ("default", false, false),
        ("read_only", false, true),
        ("database_tools", true, false),
        ("read_only_database_tools", true, true),
    ];
    std::fs::write(&exp, common::mcp_expected(&modes).to_string()).expect("write expected.json");
    common::run_client(
        "e2e.py",
        &data,
        &exp,
        &[
            "ok: tools/list, resources and identity in mode default",
            "ok: tools/list, resources and identity in mode read_only_database_tools",
            "ok: write -> refusal -> retry with the hash -> success, diagnostics, renames, bad input",
            "ok: delete's hash round trip; get with find, source, a capped read, not found",
            "ok: transact, history and restore",
            "ok: read-only mode",
        ],
    );
}
