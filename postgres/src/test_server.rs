//! A throwaway PostgreSQL server for tests (feature `test-server`; docs/postgres.md,
//! "Tests"): the one `scripts/postgres.sh run` started (its directory in
//! `LANGONROCK_TEST_POSTGRES_DIR`), or else one this process starts through
//! `scripts/postgres.sh start --watch <pid>`, which stops it once the process exits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static NEXT: AtomicU64 = AtomicU64::new(0);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    /// Its directory (data, socket, logs) as `scripts/postgres.sh` laid it out.
    pub dir: PathBuf,
    /// The superuser DSN, without a tenant.
    pub dsn: String,
}

impl Server {
    /// A new private server in a fresh temporary directory (a test that stops and restarts
    /// its server must not share one).
    pub fn start_private(tag: &str) -> Server {
        Server::start_with(tag, false)
    }

    /// A new private server that also offers TLS, its certificate signed by the test CA in
    /// `<dir>/ca.crt`.
    pub fn start_with(tag: &str, tls: bool) -> Server {
        let dir = std::env::temp_dir().join(format!(
            "langonrock-pg-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .args(tls.then_some("--tls"))
            .arg("--watch")
            .arg(std::process::id().to_string())
            .output()
            .expect("bash runs scripts/postgres.sh");
        assert!(
            out.status.success(),
            "scripts/postgres.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dsn = std::fs::read_to_string(dir.join("dsn"))
            .expect("the script writes the dsn")
            .trim()
            .to_string();
        Server { dir, dsn }
    }

    /// `scripts/postgres.sh down|up <dir>`: stops or starts the server, keeping its data.
    pub fn ctl(&self, what: &str) {
        let out = Command::new("bash")
            .arg(script())
            .arg(what)
            .arg(&self.dir)
            .output()
            .expect("bash runs scripts/postgres.sh");
        assert!(
            out.status.success(),
            "scripts/postgres.sh {what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The DSN with `params` appended (`tenant=…&schema=…`).
    pub fn dsn_with(&self, params: &str) -> String {
        let sep = if self.dsn.contains('?') { '&' } else { '?' };
        format!("{}{sep}{params}", self.dsn)
    }

    /// A superuser connection for setting up a case.
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.dsn, postgres::NoTls).expect("admin connection")
    }
}

/// The shared server of this process.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var_os("LANGONROCK_TEST_POSTGRES_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let dsn = std::fs::read_to_string(dir.join("dsn"))
                .expect("LANGONROCK_TEST_POSTGRES_DIR holds the dsn file of scripts/postgres.sh")
                .trim()
                .to_string();
            Server { dir, dsn }
        }
        None => Server::start_private("shared"),
    })
}
