//! The requests' state: libpq's `asyncStatus`, the pipeline status and the queue of
//! outstanding requests (`PGcmdQueueEntry`), with libpq's rules for what may be sent
//! when and for moving from one request's results to the next. No I/O: `send` and
//! `receive` drive it.

use std::collections::VecDeque;

use crate::error::ConnError;
use crate::result::ResultStatus;

/// libpq's `PQpipelineStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineStatus {
    /// Not in pipeline mode.
    Off,
    /// In pipeline mode.
    On,
    /// In pipeline mode, an error occurred: commands until the next sync are skipped.
    Aborted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsyncState {
    Idle,
    Busy,
    Ready,
    PipelineIdle,
    CopyIn,
    CopyOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueryClass {
    Simple,
    Extended,
    Prepare,
    Sync,
}

/// An outstanding request; `query` is kept (when libpq keeps it) for the error cursor.
struct Pending {
    class: QueryClass,
    query: Option<String>,
}

/// Where the requests are (see the module header).
pub(crate) struct Pipeline {
    state: AsyncState,
    status: PipelineStatus,
    queue: VecDeque<Pending>,
    /// Query strings of finished requests, reused for the next ones.
    spare: Vec<String>,
    /// The result `get_result` hands out next, in state `Ready`.
    ready: Option<ResultStatus>,
}

fn usage(text: &str) -> ConnError {
    ConnError::Usage(text.into())
}

impl Pipeline {
    pub(crate) fn new() -> Pipeline {
        Pipeline {
            state: AsyncState::Idle,
            status: PipelineStatus::Off,
            queue: VecDeque::with_capacity(16),
            spare: Vec::new(),
            ready: None,
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> AsyncState {
        self.state
    }

    #[inline]
    pub(crate) fn set_state(&mut self, s: AsyncState) {
        self.state = s;
    }

    #[inline]
    pub(crate) fn status(&self) -> PipelineStatus {
        self.status
    }

    /// Whether requests are sent without a Sync each (pipeline mode).
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.status != PipelineStatus::Off
    }

    /// The class of the request whose results come next.
    #[inline]
    pub(crate) fn front_class(&self) -> Option<QueryClass> {
        self.queue.front().map(|p| p.class)
    }

    /// The query of the request whose results come next, for an error's cursor.
    pub(crate) fn current_query(&self) -> Option<String> {
        match self.queue.front() {
            Some(Pending {
                query: Some(q),
                class: QueryClass::Simple | QueryClass::Extended | QueryClass::Prepare,
            }) => Some(q.clone()),
            _ => None,
        }
    }

    /// A result is complete: `get_result` hands it out next.
    #[inline]
    pub(crate) fn result_ready(&mut self, r: ResultStatus) {
        self.ready = Some(r);
        self.state = AsyncState::Ready;
    }

    /// The result to hand out in state `Ready`; the state moves on past it.
    #[inline]
    pub(crate) fn take_ready(&mut self) -> ResultStatus {
        let r = self.ready.take().unwrap_or(ResultStatus::CommandOk);
        self.advance(false, r == ResultStatus::PipelineSync);
        self.state = if self.is_on() {
            AsyncState::PipelineIdle
        } else {
            AsyncState::Busy
        };
        r
    }

    /// An error arrived: in pipeline mode, what follows up to the next sync is skipped.
    pub(crate) fn error_arrived(&mut self) {
        if self.is_on() {
            self.status = PipelineStatus::Aborted;
        }
    }

    /// ReadyForQuery arrived.
    #[inline]
    pub(crate) fn ready_for_query(&mut self) {
        if self.is_on() {
            self.result_ready(ResultStatus::PipelineSync);
            self.status = PipelineStatus::On;
        } else {
            self.advance(true, false);
            self.state = AsyncState::Idle;
        }
    }

    /// The connection broke: no request will be answered.
    pub(crate) fn lost(&mut self) {
        self.state = AsyncState::Idle;
        self.queue.clear();
    }

    /// libpq's `pqCommandQueueAdvance`: the front request is done when a simple
    /// query's ReadyForQuery or a sync's PipelineSync has been seen.
    fn advance(&mut self, ready_for_query: bool, got_sync: bool) {
        let Some(head) = self.queue.front() else {
            return;
        };
        if (head.class == QueryClass::Simple && !ready_for_query)
            || (head.class == QueryClass::Sync && !got_sync)
        {
            return;
        }
        if let Some(p) = self.queue.pop_front() {
            if let Some(q) = p.query {
                self.spare.push(q);
            }
        }
    }

    /// libpq's `pqPipelineProcessQueue`: starts on the next request's results.
    pub(crate) fn process_queue(&mut self) {
        match self.state {
            AsyncState::Idle => {
                if self.queue.is_empty() {
                    return;
                }
            }
            AsyncState::PipelineIdle => {}
            _ => return,
        }
        let Some(head) = self.queue.front() else {
            self.state = AsyncState::Idle;
            return;
        };
        if self.status == PipelineStatus::Aborted && head.class != QueryClass::Sync {
            self.result_ready(ResultStatus::PipelineAborted);
        } else {
            self.state = AsyncState::Busy;
        }
    }

    /// libpq's `PQsendQueryStart` checks (the connection is known not broken).
    pub(crate) fn can_send(&self) -> Result<(), ConnError> {
        match (self.status, self.state) {
            (PipelineStatus::Off, AsyncState::Idle) => Ok(()),
            (PipelineStatus::Off, _) => Err(usage("another command is already in progress")),
            (_, AsyncState::CopyIn | AsyncState::CopyOut) => {
                Err(usage("cannot queue commands during COPY"))
            }
            _ => Ok(()),
        }
    }

    /// A request was sent: its results are expected after those before it.
    pub(crate) fn push(&mut self, class: QueryClass, query: Option<&str>) {
        let query = query.map(|q| {
            let mut s = self.spare.pop().unwrap_or_default();
            s.clear();
            s.push_str(q);
            s
        });
        self.queue.push_back(Pending { class, query });
        match self.status {
            PipelineStatus::Off | PipelineStatus::On => {
                if self.state == AsyncState::Idle {
                    self.state = AsyncState::Busy;
                }
            }
            PipelineStatus::Aborted => {
                if matches!(self.state, AsyncState::Idle | AsyncState::PipelineIdle) {
                    self.process_queue();
                }
            }
        }
    }

    /// `PQenterPipelineMode`.
    pub(crate) fn enter(&mut self) -> Result<(), ConnError> {
        if self.is_on() {
            return Ok(());
        }
        if self.state != AsyncState::Idle {
            return Err(usage("cannot enter pipeline mode, connection not idle"));
        }
        self.status = PipelineStatus::On;
        Ok(())
    }

    /// `PQexitPipelineMode`: only once every result has been collected.
    pub(crate) fn exit(&mut self) -> Result<(), ConnError> {
        match self.state {
            AsyncState::Ready => {
                return Err(usage("cannot exit pipeline mode with uncollected results"))
            }
            AsyncState::Busy => return Err(usage("cannot exit pipeline mode while busy")),
            AsyncState::CopyIn | AsyncState::CopyOut => {
                return Err(usage("cannot exit pipeline mode while in COPY"))
            }
            AsyncState::Idle | AsyncState::PipelineIdle => {}
        }
        if !self.queue.is_empty() {
            return Err(usage("cannot exit pipeline mode with uncollected results"));
        }
        self.status = PipelineStatus::Off;
        self.state = AsyncState::Idle;
        Ok(())
    }

    /// Whether a Sync may be queued now.
    pub(crate) fn can_sync(&self) -> Result<(), ConnError> {
        if !self.is_on() {
            return Err(usage("cannot send pipeline when not in pipeline mode"));
        }
        if matches!(self.state, AsyncState::CopyIn | AsyncState::CopyOut) {
            return Err(usage(
                "internal error: cannot send pipeline while in COPY mode",
            ));
        }
        Ok(())
    }
}
