//! The tables and their migration (`docs/postgres.md`, "Schema").
//!
//! Every statement text is built once, here, from the validated schema name (the only
//! identifier that comes from outside; `langonrock_core::dsn::schema_name` admits only
//! `[a-z0-9_]`). Every value (tenant ids, kinds, keys, bytes, times) is a parameter.

use langonrock_core::Error;
use postgres::error::SqlState;
use postgres::{Client, GenericClient};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i32 = 1;

/// The notification channel a successful head swap notifies, with the tenant as payload.
pub const CHANNEL: &str = "langonrock_head";

/// The statement texts of one schema.
#[derive(Debug)]
pub(crate) struct Sql {
    pub(crate) schema: String,
    pub(crate) read_version: String,
    pub(crate) create: String,
    pub(crate) read_head: String,
    pub(crate) tenants: String,
    pub(crate) get_many: String,
    pub(crate) put_many: String,
    pub(crate) swap: String,
    pub(crate) first_swap: String,
    pub(crate) commit: String,
    pub(crate) first_commit: String,
    pub(crate) keys: String,
    pub(crate) remove: String,
}

impl Sql {
    pub(crate) fn new(schema: &str) -> Sql {
        let s = format!("\"{schema}\"");
        // Identical bytes refresh the put time; a derived record is replaced; different
        // bytes under a content key update nothing and return no row (the caller reports
        // CORRUPT and rolls back). Keeping `r.bytes` reuses the stored value.
        let put = format!(
            "INSERT INTO {s}.records AS r (tenant, kind, key, bytes, put_time)
             SELECT $1, u.kind, u.key, u.bytes, clock_timestamp()
             FROM unnest($2::text[], $3::bytea[], $4::bytea[]) AS u(kind, key, bytes)
             ON CONFLICT (tenant, kind, key) DO UPDATE
               SET put_time = EXCLUDED.put_time,
                   bytes = CASE WHEN r.kind = 'derived' THEN EXCLUDED.bytes ELSE r.bytes END
               WHERE r.kind = 'derived' OR r.bytes = EXCLUDED.bytes
             RETURNING r.kind, r.key"
        );
        // A commit in one statement (one round trip; in autocommit its own transaction):
        // the records, the conditional head swap, the notification. The statement fails,
        // so nothing of it stays, with `invalid_argument_for_logarithm` (2201E) when a
        // record was refused and with `division_by_zero` (22012) when the head was not the
        // expected one (a conflict): plain SQL has no `RAISE`, and both errors can come
        // from nowhere else in it. The branches are not constants, so they are evaluated
        // only when taken.
        let outcome = "SELECT CASE
               WHEN (SELECT count(*) FROM put) <> cardinality($2::text[])
                 THEN ln(0 * (SELECT count(*) FROM put)::float8)::bigint
               WHEN (SELECT count(*) FROM s) = 0 THEN 1 / (SELECT count(*) FROM s)
               ELSE (SELECT count(*) FROM n) END";
        Sql {
            schema: schema.to_string(),
            read_version: format!("SELECT version FROM {s}.meta"),
            create: format!(
                "CREATE SCHEMA IF NOT EXISTS {s};
                 CREATE TABLE IF NOT EXISTS {s}.meta (
                     singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                     version integer NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.heads (
                     tenant text PRIMARY KEY,
                     head bytea NOT NULL,
                     swapped_at timestamptz NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.records (
                     tenant text NOT NULL,
                     kind text NOT NULL
                         CHECK (kind IN ('source', 'revision', 'record', 'derived', 'recovery')),
                     key bytea NOT NULL CHECK (octet_length(key) = 32),
                     bytes bytea NOT NULL,
                     put_time timestamptz NOT NULL,
                     PRIMARY KEY (tenant, kind, key));
                 ALTER TABLE {s}.records ALTER COLUMN bytes SET STORAGE EXTERNAL;
                 INSERT INTO {s}.meta (version) VALUES ({SCHEMA_VERSION}) ON CONFLICT DO NOTHING;"
            ),
            read_head: format!("SELECT head FROM {s}.heads WHERE tenant = $1"),
            tenants: format!("SELECT tenant FROM {s}.heads ORDER BY tenant COLLATE \"C\""),
            get_many: format!(
                "SELECT u.i, r.bytes
                 FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS u(kind, key, i)
                 JOIN {s}.records r ON r.tenant = $1 AND r.kind = u.kind AND r.key = u.key"
            ),
            // $1 tenant, $2 kinds, $3 keys, $4 bytes, $5 expected head, $6 new head.
            commit: format!(
                "WITH put AS ({put}),
                      s AS (UPDATE {s}.heads SET head = $6, swapped_at = clock_timestamp()
                            WHERE tenant = $1 AND head = $5 RETURNING tenant),
                      n AS (SELECT pg_notify('{CHANNEL}', tenant) FROM s)
                 {outcome}"
            ),
            // The first head: $5 is the new head.
            first_commit: format!(
                "WITH put AS ({put}),
                      s AS (INSERT INTO {s}.heads (tenant, head, swapped_at)
                            VALUES ($1, $5, clock_timestamp())
                            ON CONFLICT (tenant) DO NOTHING RETURNING tenant),
                      n AS (SELECT pg_notify('{CHANNEL}', tenant) FROM s)
                 {outcome}"
            ),
            put_many: put,
            // One conditional statement: zero rows is a conflict. The notification is sent
            // when the statement's transaction commits.
            swap: format!(
                "WITH s AS (UPDATE {s}.heads SET head = $3, swapped_at = clock_timestamp()
                            WHERE tenant = $1 AND head = $2 RETURNING tenant)
                 SELECT pg_notify('{CHANNEL}', tenant) FROM s"
            ),
            first_swap: format!(
                "WITH s AS (INSERT INTO {s}.heads (tenant, head, swapped_at)
                            VALUES ($1, $2, clock_timestamp())
                            ON CONFLICT (tenant) DO NOTHING RETURNING tenant)
                 SELECT pg_notify('{CHANNEL}', tenant) FROM s"
            ),
            keys: format!(
                "SELECT kind, key, floor(extract(epoch FROM put_time) * 1000)::bigint,
                        octet_length(bytes)::bigint
                 FROM {s}.records WHERE tenant = $1"
            ),
            remove: format!(
                "DELETE FROM {s}.records r
                 USING unnest($2::text[], $3::bytea[]) AS u(kind, key)
                 WHERE r.tenant = $1 AND r.kind = u.kind AND r.key = u.key
                   AND r.kind <> 'recovery'
                   AND floor(extract(epoch FROM r.put_time) * 1000)::bigint < $4
                 RETURNING r.kind, r.key"
            ),
        }
    }
}

/// The schema version the database holds, `None` when it has no langonrock tables. It asks
/// `to_regclass` first, so a missing table is no error (which would abort a transaction).
pub(crate) fn version(
    client: &mut impl GenericClient,
    sql: &Sql,
) -> Result<Option<i32>, postgres::Error> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&format!("\"{}\".meta", sql.schema)],
        )?
        .get(0);
    if !exists {
        return Ok(None);
    }
    Ok(client.query_opt(&sql.read_version, &[])?.map(|r| r.get(0)))
}

pub(crate) fn newer(found: i32) -> Error {
    Error::Invalid(format!(
        "database schema {found} is newer than this langonrock ({SCHEMA_VERSION}): upgrade langonrock"
    ))
}

/// The refusal of a write to a database without the schema, by a store that may not
/// create it.
pub(crate) fn no_schema(schema: &str) -> String {
    format!(
        "the database has no langonrock schema \"{schema}\": connect once without --read-only to create it"
    )
}

/// Checks the schema version and, when the tables are missing and `create` is set, creates
/// them under an advisory lock (so racing first connections create them once). A database
/// with the current version is only read: a user without the right to create anything can
/// use a schema an owner created. Returns whether the tables exist (false only without
/// `create`).
pub(crate) fn migrate(client: &mut Client, sql: &Sql, create: bool) -> Result<bool, Error> {
    let err = |e: postgres::Error| Error::Store(crate::describe("cannot read the schema", &e));
    match version(client, sql).map_err(err)? {
        Some(v) if v == SCHEMA_VERSION => return Ok(true),
        Some(v) if v > SCHEMA_VERSION => return Err(newer(v)),
        None if !create => return Ok(false),
        _ if !create => return Err(Error::Invalid(no_schema(&sql.schema))),
        _ => {}
    }
    let who: (String, String) = client
        .query_one("SELECT current_database()::text, current_user::text", &[])
        .map(|r| (r.get(0), r.get(1)))
        .map_err(err)?;
    let mut tx = client.transaction().map_err(err)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("langonrock schema {}", sql.schema)],
    )
    .map_err(err)?;
    // Under the lock: another process may have migrated meanwhile.
    let found = version(&mut tx, sql).map_err(err)?;
    match found {
        Some(v) if v > SCHEMA_VERSION => return Err(newer(v)),
        Some(v) if v == SCHEMA_VERSION => return tx.commit().map(|()| true).map_err(err),
        _ => {}
    }
    if let Err(e) = tx.batch_execute(&sql.create) {
        if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
            let (db, user) = who;
            return Err(Error::Invalid(format!(
                "cannot create langonrock's schema \"{}\" in database \"{db}\" as user \"{user}\": {}. Grant the right (GRANT CREATE ON DATABASE \"{db}\" TO \"{user}\"), or connect once as a user who has it",
                sql.schema,
                e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string())
            )));
        }
        return Err(err(e));
    }
    tx.commit().map(|()| true).map_err(err)
}
