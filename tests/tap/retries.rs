//! Retries after serialization failures and deadlocks (`--max-tries`).

use std::sync::Mutex;

use super::Case;
use crate::support::{fresh_db, Db};

/// The retry cases watch pg_locks for advisory-lock waiters of any database, so they
/// must not run at the same time.
static ADVISORY_LOCKS: Mutex<()> = Mutex::new(());

fn retry_db(name: &str) -> Db {
    let db = fresh_db(name);
    db.psql(
        "CREATE UNLOGGED TABLE first_client_table (value integer); \
         CREATE UNLOGGED TABLE xy (x integer, y integer); \
         INSERT INTO xy VALUES (1, 2);",
    );
    db
}

const SERIALIZATION_SCRIPT: &str = r#"
\set delta random(-5000, 5000)

-- The second client waits here until the first one has started its update.
SELECT pg_advisory_lock(0);

BEGIN;
UPDATE xy SET y = y + :delta WHERE x = 1 AND pg_advisory_lock(1) IS NOT NULL;

-- The first client (the table is still empty) lets the second one go, waits until
-- it blocks on the same row, and commits: the second gets a serialization failure
-- and sees a non-empty table when it tries again.
DO $$
DECLARE
  exists boolean;
  waiters integer;
BEGIN
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF NOT exists THEN
	PERFORM pg_advisory_unlock(0);
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 1::bigint) AND NOT granted;
	  IF waiters = 1 THEN
		INSERT INTO first_client_table VALUES (1);
		EXIT;
	  END IF;
	END LOOP;
  END IF;
END$$;

COMMIT;
SELECT pg_advisory_unlock_all();
"#;

/// A serialization failure is retried with the same random value of `delta`.
#[test]
fn concurrent_update_with_retrying() {
    let _serial = ADVISORY_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let db = retry_db("tap_serialization");
    let err_pattern = r"(?s)(client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b).*client \2 got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update\b.*\1";
    Case {
        name: "concurrent update with retrying",
        opts: "-n -c 2 -t 1 -d --verbose-errors --max-tries 2",
        stdout: &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        stderr: &[err_pattern],
        files: &[("001_pgbench_serialization", SERIALIZATION_SCRIPT)],
        env: &[(
            "PGOPTIONS",
            r"-c default_transaction_isolation=repeatable\ read",
        )],
        ..Case::default()
    }
    .check(&db);
}

const DEADLOCK_SCRIPT: &str = r#"
-- The first client takes lock 2; the second takes lock 3 and waits for 2; the first
-- then waits for 3, and one of them gets a deadlock error. The other one holds a
-- lock from the start, so it releases everything before the failed one tries again.

-- What the failed client still holds from its failed try.
SELECT pg_advisory_unlock_all();

-- The second client and the retrying one stop here.
SELECT pg_advisory_lock(0);
SELECT pg_advisory_lock(1);

-- The first client leaves a row behind, so the others know they are not first.
DO $$
DECLARE
  exists boolean;
BEGIN
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF exists THEN
	PERFORM pg_advisory_unlock(0);
	PERFORM pg_advisory_lock(3);
	-- The second client can get a deadlock here.
	PERFORM pg_advisory_lock(2);
  ELSE
	INSERT INTO first_client_table VALUES (1);
	PERFORM pg_advisory_lock(2);
  END IF;
END$$;

DO $$
DECLARE
  num_rows integer;
  waiters integer;
BEGIN
  SELECT COUNT(*) FROM first_client_table INTO STRICT num_rows;
  IF num_rows = 1 THEN
	INSERT INTO first_client_table VALUES (2);
	-- Let the second client begin, and wait until it is ready for the deadlock.
	PERFORM pg_advisory_unlock(0);
	PERFORM pg_advisory_unlock(1);
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND
	  objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 2::bigint) AND
	  NOT granted;
	  IF waiters = 1 THEN
		EXIT;
	  END IF;
	END LOOP;
	PERFORM pg_advisory_lock(0);
  END IF;
END$$;

-- The first client can get a deadlock here.
SELECT pg_advisory_lock(3);

SELECT pg_advisory_unlock_all();
"#;

#[test]
fn deadlock_with_retrying() {
    let _serial = ADVISORY_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let db = retry_db("tap_deadlock");
    Case {
        name: "deadlock with retrying",
        opts: "-n -c 2 -t 1 --max-tries 2 --verbose-errors",
        stdout: &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        stderr: &[
            r"client (0|1) got an error in command (3|5) \(SQL\) of script 0; ERROR:  deadlock detected\b",
        ],
        files: &[("001_pgbench_deadlock", DEADLOCK_SCRIPT)],
        env: &[(
            "PGOPTIONS",
            r"-c default_transaction_isolation=read\ committed",
        )],
        ..Case::default()
    }
    .check(&db);
}
