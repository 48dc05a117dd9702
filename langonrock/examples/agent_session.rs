//! An agent's session through the library, step by step, printing what the agent sees:
//!
//! ```sh
//! cargo run -p langonrock --example agent_session                                 # in memory
//! cargo run -p langonrock --example agent_session -- "okf:///tmp/kb?tenant=demo"  # any DSN
//! ```
//!
//! An empty tenant is seeded with four notes first (one commit), so the example runs on a
//! fresh data root too. Then: the manifest, one batched `get`, a search and a read at its
//! `pos`, a write that is refused without the current hash and retried with it, and the
//! same refusal as an MCP tool reply (which carries the hash itself).

use langonrock::{parse_transaction, Connection, Error, GetOptions, OwnedSlice, SearchOptions};
use serde_json::json;

fn main() {
    let dsn = std::env::args().nth(1);
    let opened = match &dsn {
        Some(dsn) => langonrock::open(dsn),
        None => Connection::memory("demo"),
    };
    if let Err(e) = opened.and_then(|kb| session(&kb)) {
        eprintln!("error: {} ({})", e.message(), e.code());
        std::process::exit(1);
    }
}

/// Prints a slice under its frame line, as the CLI does.
fn show(id: &str, slice: &OwnedSlice) {
    println!(
        "@@ {id} [{}..{} of {}]",
        slice.start, slice.end, slice.total
    );
    println!("{}", slice.text.strip_suffix('\n').unwrap_or(&slice.text));
}

/// Prints a step's heading.
fn step(title: &str) {
    println!("\n== {title}");
}

fn session(kb: &Connection) -> Result<(), Error> {
    if kb.snapshot()?.concepts == 0 {
        seed(kb)?;
    }

    step("1. manifest: what is there (one row per concept)");
    print!("{}", kb.manifest(None)?);

    step("2. one batched get for two concepts (the first 300 units of each)");
    let head = GetOptions {
        limit: Some(300),
        ..GetOptions::default()
    };
    for (id, slice) in kb.get(&["runbook", "orders"], &head)? {
        show(&id, &slice);
    }

    step("3. search, then read 2,000 units at the hit's pos");
    let hits = kb.search("refund paid", &SearchOptions::default())?;
    print!("{hits}");
    // The TSV's last column is `pos` (`-` for linked rows).
    let first = hits
        .lines()
        .skip_while(|l| !l.starts_with("id\t"))
        .nth(1)
        .and_then(|row| {
            let cells: Vec<&str> = row.split('\t').collect();
            Some((cells[0].to_string(), cells.last()?.parse::<u64>().ok()?))
        });
    if let Some((id, pos)) = first {
        let at = GetOptions {
            offset: Some(pos),
            limit: Some(2000),
            ..GetOptions::default()
        };
        for (id, slice) in kb.get(&[id], &at)? {
            println!(
                "@@ {id} [{}..{} of {}]",
                slice.start, slice.end, slice.total
            );
            print!("{}", slice.text);
        }
    }

    step("4. an edit that does not name the version it replaces is refused; the retry does");
    let edited = "---\ntype: note\n---\n# Today\n\nCall the customer about the refund.\n";
    match kb.write("inbox", "today.md", edited, None) {
        Err(Error::Conflict { message, .. }) => {
            println!("refused: {message}");
            let hash = kb.current_hash("inbox", "today.md");
            let w = kb.write("inbox", "today.md", edited, hash.as_deref())?;
            let old = hash.unwrap_or_default();
            println!("retried with replaces {old}: wrote hash {}", w.hash);
        }
        Ok(w) => println!("wrote inbox/today.md (hash {})", w.hash),
        Err(e) => return Err(e),
    }

    step("5. the same refusal as the MCP tool reply an agent gets");
    let reply = kb.call_tool(
        "write",
        Some(&json!({"bundle": "inbox", "path": "today.md", "content": edited})),
    );
    println!("{}", reply.text);
    Ok(())
}

/// Four notes in one commit: a long table whose refund rules sit far down its body, its
/// customers, a runbook and the day's note.
fn seed(kb: &Connection) -> Result<(), Error> {
    let columns: String = (1..=300).map(|i| format!("- column_{i}\n")).collect();
    let orders = format!(
        "---\ntype: table\ndescription: Orders placed online, one row per order line.\n---\n\
         # Orders\n\nSee [[customers]].\n\n## Columns\n\n{columns}\n## Refunds\n\n\
         A refund is a negative order line, booked on the day it is paid.\n"
    );
    let txn = parse_transaction(&json!({"changes": [
        {"operation": "write", "bundle": "sales", "path": "orders.md", "content": orders},
        {"operation": "write", "bundle": "sales", "path": "customers.md",
         "content": "---\ntype: table\n---\n# Customers\n\nPeople who order.\n"},
        {"operation": "write", "bundle": "ops", "path": "runbook.md",
         "content": "---\ntype: runbook\n---\n# Runbook\n\nReplay the export when the orders load fails.\n"},
        {"operation": "write", "bundle": "inbox", "path": "today.md",
         "content": "---\ntype: note\n---\n# Today\n\nCall the customer.\n"},
    ]}))?;
    let r = kb.transact(txn)?;
    println!("seeded {} concepts (revision {})", r.concepts, r.revision);
    Ok(())
}
