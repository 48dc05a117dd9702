use super::*;

fn key(k: &str) -> Step {
    Step::Key(k.into())
}

#[test]
fn finds_the_id_and_method() {
    let f = Scanner::scan(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":"x"}}"#);
    assert_eq!(f.id.as_deref(), Some("7"));
    assert_eq!(f.method.as_deref(), Some("tools/call"));
    assert!(f.has_id && !f.response && !f.batch);
    let f = Scanner::scan(br#"{"method": "ping" , "id" : "a\"b" }"#);
    assert_eq!(f.id.as_deref(), Some(r#""a\"b""#));
    assert_eq!(f.method.as_deref(), Some("ping"));
    let f = Scanner::scan(br#"{"params":{"x":[1,2,{"id":3}]},"id":1e400}"#);
    assert_eq!(f.id.as_deref(), Some("1e400"));
    assert_eq!(f.out_of_range, vec![vec![key("id")]]);
    let f = Scanner::scan(br#"{"id":{"a":[1]},"method":42}"#);
    assert_eq!(f.id.as_deref(), Some(r#"{"a":[1]}"#));
    assert_eq!(f.method, None);
    let f = Scanner::scan(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    assert!(f.response);
    assert!(Scanner::scan(b"[1,2]").batch);
    // Whether the text is one value: a closed container and nothing after it.
    assert!(f.whole);
    assert!(!Scanner::scan(br#"{"a":1} x"#).whole);
    assert!(!Scanner::scan(br#"{"a":1}{"b":2}"#).whole);
    assert!(!Scanner::scan(br#"{"a":1"#).whole);
    assert!(!Scanner::scan(br#"x{"a":1}"#).whole);
    assert!(Scanner::scan(b" {\"a\":1}  \r").whole);
    let f = Scanner::scan(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(!f.has_id && f.id.is_none());
    // An id too long to echo is not kept.
    let long = format!(r#"{{"id":"{}"}}"#, "a".repeat(2000));
    let f = Scanner::scan(long.as_bytes());
    assert!(f.has_id && f.id.is_none());
}

#[test]
fn finds_the_id_of_a_message_fed_in_pieces() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write","arguments":{{"content":"{}"}}}},"id":42}}"#,
        "x".repeat(100_000)
    );
    let mut s = Scanner::new();
    for chunk in big.as_bytes().chunks(777) {
        s.feed(chunk);
    }
    let f = s.finish();
    assert_eq!(f.id.as_deref(), Some("42"));
    assert_eq!(f.method.as_deref(), Some("tools/call"));
}

#[test]
fn repairs_lone_surrogates_and_names_their_paths() {
    let text = br#"{"params":{"arguments":{"content":"a\ud83d","query":"\udc00x","ok":"\ud83d\ude00","changes":[{"path":"p"},{"content":"\ud800\ud800"}]}}}"#;
    let (fixed, f) = Scanner::repair(text);
    let v: serde_json::Value = serde_json::from_slice(&fixed).expect("repaired text parses");
    let args = &v["params"]["arguments"];
    assert_eq!(args["content"], "a\u{fffd}");
    assert_eq!(args["query"], "\u{fffd}x");
    assert_eq!(args["ok"], "😀");
    assert_eq!(args["changes"][1]["content"], "\u{fffd}\u{fffd}");
    let p = |steps: &[Step]| {
        let mut v = vec![key("params"), key("arguments")];
        v.extend_from_slice(steps);
        v
    };
    assert_eq!(
        f.ill_formed,
        vec![
            p(&[key("content")]),
            p(&[key("query")]),
            p(&[key("changes"), Step::Index(1), key("content")])
        ]
    );
    assert_eq!(
        render(&f.ill_formed[2]),
        "params.arguments.changes[1].content"
    );
    // A key with a lone surrogate is named by its member's path.
    let (fixed, f) = Scanner::repair(br#"{"a":{"\udfff":1}}"#);
    assert!(serde_json::from_slice::<serde_json::Value>(&fixed).is_ok());
    assert_eq!(f.ill_formed.len(), 1);
    // Well-formed text is copied byte for byte.
    let plain = br#"{"a":[1,2.5,-3e2,true,null,"\n\u00e9\ud83d\ude00"], "b" : {}}"#;
    let (same, f) = Scanner::repair(plain);
    assert_eq!(same, plain.to_vec());
    assert!(f.ill_formed.is_empty() && f.out_of_range.is_empty());
}

#[test]
fn repairs_numbers_out_of_range() {
    let (fixed, f) = Scanner::repair(br#"{"k":1e400,"j":[-2E+309,1.5e308,0.0000e999,1e-400]}"#);
    let v: serde_json::Value = serde_json::from_slice(&fixed).expect("repaired text parses");
    assert_eq!(v["k"], "1e400");
    assert_eq!(v["j"][0], "-2E+309");
    assert_eq!(v["j"][1], 1.5e308);
    assert_eq!(
        f.out_of_range,
        vec![vec![key("k")], vec![key("j"), Step::Index(0)]]
    );
    // A number too long to keep whole is judged by its shape.
    let digits = format!(r#"{{"n":{}}}"#, "9".repeat(400));
    let (fixed, f) = Scanner::repair(digits.as_bytes());
    assert_eq!(f.out_of_range.len(), 1);
    assert!(serde_json::from_slice::<serde_json::Value>(&fixed).is_ok());
    let fine = format!(r#"{{"n":{}}}"#, "9".repeat(300));
    assert!(Scanner::scan(fine.as_bytes()).out_of_range.is_empty());
}

#[test]
fn deep_nesting_stays_in_bounded_memory() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let f = Scanner::scan(deep.as_bytes());
    assert!(f.batch && f.ill_formed.is_empty());
}

proptest::proptest! {
    /// Any JSON serde_json writes comes out of a repair unchanged, and what it finds agrees
    /// with serde_json's own reading of the top level.
    #[test]
    fn well_formed_json_is_untouched(v in json_value(), id in proptest::option::of(0i64..1000)) {
        let mut msg = serde_json::json!({"jsonrpc": "2.0", "method": "m", "params": v});
        if let Some(id) = id {
            msg["id"] = serde_json::json!(id);
        }
        let text = serde_json::to_vec(&msg).unwrap();
        let (same, f) = Scanner::repair(&text);
        proptest::prop_assert_eq!(&same, &text);
        proptest::prop_assert_eq!(f.id, id.map(|i| i.to_string()));
        proptest::prop_assert_eq!(f.method.as_deref(), Some("m"));
        proptest::prop_assert!(f.ill_formed.is_empty());
    }

    /// Arbitrary bytes never panic the scanner, fed whole or in pieces.
    #[test]
    fn any_bytes_scan(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), cut in 0usize..400) {
        let _ = Scanner::repair(&bytes);
        let mut s = Scanner::new();
        let cut = cut.min(bytes.len());
        s.feed(&bytes[..cut]);
        s.feed(&bytes[cut..]);
        let _ = s.finish();
    }
}

fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        (-1e300f64..1e300).prop_map(|n| serde_json::json!(n)),
        "\\PC{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn request_bodies_are_read_past_their_flaws_and_the_flaws_named() {
    // Plain JSON: nothing found.
    let (v, f) = parse_repairing(br#"{"q":"x","k":3}"#).unwrap();
    assert_eq!((v["k"].as_u64(), f), (Some(3), Found::default()));
    // Not JSON either way: the parser's error.
    assert!(parse_repairing(b"{\"q\":").is_err());
    assert!(parse_repairing(br#"{"q":"\ud800"#).is_err());
    // A lone surrogate: named, wherever it is.
    let (v, f) = parse_repairing(br#"{"q":"a\ud800b","k":1}"#).unwrap();
    assert_eq!(v["q"], "a\u{fffd}b");
    assert_eq!(
        refuse_flaws(&f, &v, false),
        Err("q must contain well-formed Unicode".to_string())
    );
    let (v, f) = parse_repairing(br#"{"ids":["ok","\udc00"]}"#).unwrap();
    assert_eq!(
        refuse_flaws(&f, &v, true),
        Err("ids[1] must contain well-formed Unicode".to_string())
    );
    // A number too large for a double: named, its text quoted, the fix given.
    let (v, f) = parse_repairing(br#"{"q":"x","k":1e400}"#).unwrap();
    assert_eq!(
        refuse_flaws(&f, &v, false),
        Err("k must be a number a double can hold (at most about 1.8e308), got 1e400".into())
    );
    let long = format!(r#"{{"k":{}}}"#, "9".repeat(400));
    let (v, f) = parse_repairing(long.as_bytes()).unwrap();
    let m = refuse_flaws(&f, &v, false).unwrap_err();
    assert!(
        m.starts_with("k must be a number a double can hold") && m.ends_with('…') && m.len() < 200,
        "{m}"
    );
    // Document content in a transaction is left to the engine, by index; a lone surrogate
    // in another member of a change is named.
    let body = br#"{"changes":[{"operation":"write","bundle":"b","path":"a.md","content":"ok"},{"operation":"write","bundle":"b","path":"c.md","content":"\ud83d"}]}"#;
    let (v, f) = parse_repairing(body).unwrap();
    assert_eq!(refuse_flaws(&f, &v, true), Ok(vec![1]));
    assert_eq!(
        refuse_flaws(&f, &v, false),
        Err("changes[1].content must contain well-formed Unicode".to_string())
    );
    let (v, f) = parse_repairing(br#"{"changes":[{"path":"\ud83d"}]}"#).unwrap();
    assert_eq!(
        refuse_flaws(&f, &v, true),
        Err("changes[0].path must contain well-formed Unicode".to_string())
    );
    assert_eq!(
        ill_formed_message(&[]),
        "arguments must contain well-formed Unicode"
    );
}
