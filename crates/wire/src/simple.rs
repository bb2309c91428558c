//! Whole-statement helpers for set-up, init and vacuum: `execute` and `query_rows`
//! (a simple query, every result read, the first server error returned).

use crate::conn::{Connection, QueryError};
use crate::error::ConnError;
use crate::result::ResultStatus;

impl Connection {
    // ----- convenience: whole statements -----

    /// Runs `sql` (all its statements) with a simple query and reads every result;
    /// returns the first server error. A COPY started by `sql` is ended at once.
    pub fn execute(&mut self, sql: &str) -> Result<(), QueryError> {
        self.send_query(sql)?;
        let mut first_error = None;
        while let Some(r) = self.get_result()? {
            match r {
                ResultStatus::Error(e) if first_error.is_none() => first_error = Some(e),
                ResultStatus::CopyIn | ResultStatus::CopyOut => self.end_copy()?,
                _ => {}
            }
        }
        match first_error {
            Some(e) => Err(QueryError::Db(e)),
            None => Ok(()),
        }
    }

    /// Runs `sql` with a simple query and returns the rows of its last row-returning
    /// statement as text (`None` = NULL); the first server error if any.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, QueryError> {
        self.send_query(sql)?;
        self.result.start_collecting();
        let mut rows = Vec::new();
        let mut first_error = None;
        let outcome = (|| -> Result<(), ConnError> {
            while let Some(r) = self.get_result()? {
                match r {
                    ResultStatus::TuplesOk => rows = self.result.take_collected(),
                    ResultStatus::Error(e) if first_error.is_none() => first_error = Some(e),
                    ResultStatus::CopyIn | ResultStatus::CopyOut => self.end_copy()?,
                    _ => {}
                }
            }
            Ok(())
        })();
        self.result.stop_collecting();
        outcome?;
        match first_error {
            Some(e) => Err(QueryError::Db(e)),
            None => Ok(rows),
        }
    }
}
