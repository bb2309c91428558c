//! pgbench-wire: the connection layer of pgbench-rs — a lean blocking PostgreSQL
//! connection with libpq's connection semantics (conninfo strings, URIs, environment,
//! password and service files, several hosts, `sslmode`, SCRAM) and libpq's
//! asynchronous query API (`send_*` + `get_result`, pipeline mode), framing messages
//! with `postgres-protocol` and reusing its buffers so a round trip allocates nothing.
//!
//! It does not know about scripts, variables or statistics; the runner does.

mod attempt;
mod auth;
mod cancel;
mod certname;
mod conn;
mod connect;
mod conninfo;
mod copy;
mod error;
mod message_caps;
mod options;
mod passfile;
mod pipeline;
mod position;
mod prompt;
mod queued;
mod readbuf;
mod receive;
mod redact;
mod result;
mod scram;
mod send;
mod simple;
mod startup_read;
mod stream;
mod sys;
#[cfg(feature = "testing")]
pub mod testing;
mod tls;

pub use cancel::CancelToken;
pub use conn::{Connection, NoticeHandler, QueryError, TransactionStatus};
pub use copy::CopyIn;
pub use error::{strerror, ConnError, DbError};
pub use options::{ChannelBinding, ConnectArgs, ConnectOptions, TargetSessionAttrs};
pub use pipeline::PipelineStatus;
pub use prompt::prompt_password;
pub use redact::{redact_secrets, MASK};
pub use result::ResultStatus;
pub use sys::os_user_name;
pub use tls::SslMode;
