use super::*;

/// Runs the transport over `input` and returns the lines it answered by itself and the
/// messages it handed on (as JSON).
fn run(input: &[u8]) -> (Vec<Value>, Vec<Value>) {
    run_limited(input, bounds::MESSAGE_BYTES)
}

fn run_limited(input: &[u8], limit: usize) -> (Vec<Value>, Vec<Value>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (mut client, server_out) = tokio::io::duplex(1 << 20);
        let (t, task) = StdioTransport::new(std::io::Cursor::new(input.to_vec()), server_out);
        let mut t = t.with_limit(limit);
        let mut forwarded = Vec::new();
        while let Some(m) = Transport::<RoleServer>::receive(&mut t).await {
            forwarded.push(serde_json::to_value(&m).expect("json"));
        }
        drop(t);
        task.await.expect("writer");
        let mut out = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut client, &mut out)
            .await
            .expect("read");
        let answers = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("one JSON answer per line"))
            .collect();
        (answers, forwarded)
    })
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

fn session(lines: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let mut input = String::from(INIT);
    input.push('\n');
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    run(input.as_bytes())
}

fn error_of(v: &Value) -> (Value, i64, String) {
    (
        v["id"].clone(),
        v["error"]["code"].as_i64().unwrap_or(0),
        v["error"]["message"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn malformed_lines_get_their_json_rpc_answer() {
    let (answers, forwarded) = session(&[
        "this is not json",
        "[1,2]",
        "42",
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":5}"#,
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","id":"s\ud800","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"\udc00"}}"#,
        "",
        "   ",
    ]);
    let got: Vec<(Value, i64, String)> = answers.iter().map(error_of).collect();
    let null = Value::Null;
    assert_eq!(
        got,
        vec![
            (
                null.clone(),
                -32700,
                "Parse error: expected ident at line 1 column 2".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: batches are not supported; send one message per line".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: a message must be a JSON object".into()
            ),
            (
                json!(1),
                -32600,
                "Invalid request: jsonrpc must be \"2.0\"".into()
            ),
            (
                json!(2),
                -32600,
                "Invalid request: method must be a string".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: id must be a string or an integer of at most 64 bits".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: id must be a string or an integer of at most 64 bits".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: id must be a string or an integer of at most 64 bits".into()
            ),
            (
                json!(3),
                -32602,
                "Invalid params: params must be an object".into()
            ),
            (
                json!(4),
                -32602,
                "Invalid params: params.name must be the tool's name, a string".into()
            ),
            (
                json!(5),
                -32600,
                "Invalid request: a request needs a method".into()
            ),
            (
                json!(7),
                -32600,
                "Invalid request: the session is already initialized".into()
            ),
            (
                null.clone(),
                -32600,
                "Invalid request: id must be a string or an integer of at most 64 bits".into()
            ),
            (
                json!(8),
                -32602,
                "Invalid params: params.cursor must contain well-formed Unicode".into()
            ),
        ]
    );
    // Only the first initialize went on.
    assert_eq!(forwarded.len(), 1);
    assert_eq!(forwarded[0]["method"], "initialize");
}

#[test]
fn stray_messages_before_initialize_are_ignored() {
    let input = format!(
        "{}\n{}\n{}\n{INIT}\n",
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    let (answers, forwarded) = run(input.as_bytes());
    assert!(answers.is_empty(), "{answers:?}");
    let methods: Vec<&str> = forwarded
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(methods, ["ping", "initialize"]);
}

#[test]
fn tool_calls_carry_what_the_wire_held() {
    let (answers, forwarded) = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"bundle":"b","path":"a.md","content":"x\ud83d"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"q","k":1e400},"_meta":{"dev.langonrock/wire":{"arguments":5}}}}"#,
    ]);
    assert!(answers.is_empty(), "{answers:?}");
    let calls: Vec<&Value> = forwarded.iter().skip(1).collect();
    assert_eq!(
        calls[0]["params"]["_meta"][WIRE_META]["arguments"],
        json!([1])
    );
    assert!(calls[0]["params"].get("arguments").is_none());
    assert_eq!(calls[1]["params"]["arguments"]["content"], "x\u{fffd}");
    assert_eq!(
        calls[1]["params"]["_meta"][WIRE_META]["illFormed"],
        json!([["content"]])
    );
    // A number out of range reaches the tool as its text (the schema check names it), and
    // a client's own copy of the wire key is dropped.
    assert_eq!(calls[2]["params"]["arguments"]["k"], "1e400");
    assert!(calls[2]["params"]["_meta"].get(WIRE_META).is_none());
    let paths = paths_from_json(&json!([["changes", 3, "content"]]));
    assert_eq!(
        paths,
        vec![vec![
            Step::Key("changes".into()),
            Step::Index(3),
            Step::Key("content".into())
        ]]
    );
}

#[test]
fn lines_beyond_the_limit_are_answered_with_their_id() {
    let limit = 4096;
    let content = "x".repeat(limit);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write","arguments":{{"bundle":"b","path":"a.md","content":"{content}"}}}},"id":77}}"#
    );
    let note =
        format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"p":"{content}"}}}}"#);
    let garbage = "z".repeat(limit * 2);
    let mut input = format!("{INIT}\n{big}\n{note}\n{garbage}\n");
    input.push_str(r#"{"jsonrpc":"2.0","id":78,"method":"ping"}"#);
    input.push('\n');
    let (answers, forwarded) = run_limited(input.as_bytes(), limit);
    let got: Vec<(Value, i64, String)> = answers.iter().map(error_of).collect();
    assert_eq!(
        got,
        vec![
            (json!(77), -32600, too_long()),
            (Value::Null, -32600, too_long())
        ]
    );
    // The line after it is read as usual.
    assert_eq!(forwarded.last().map(|m| m["id"].clone()), Some(json!(78)));
}

#[test]
fn a_last_line_without_a_line_break_is_read() {
    let input = format!("{INIT}\n{}", r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    let (_, forwarded) = run(input.as_bytes());
    assert_eq!(forwarded.len(), 2);
}
