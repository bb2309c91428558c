//! Whether a failed transaction is tried again (pgbench's `doRetry`): serialization
//! and deadlock failures are retried while `--max-tries`, the `-L` budget of the
//! transaction and the `-T` deadline all allow it. Pure.

use pgbench_results::MaxTries;

/// The limits on retrying.
#[derive(Debug, Clone, Copy)]
pub struct RetryPlan {
    pub max_tries: MaxTries,
    pub latency_limit_us: Option<i64>,
}

impl RetryPlan {
    /// After `tries` tries, `elapsed_us` since the transaction was scheduled: may it
    /// run once more? `timer_exceeded` is asked last, as pgbench does.
    pub fn can_retry(
        &self,
        tries: u32,
        elapsed_us: impl FnOnce() -> i64,
        timer_exceeded: impl FnOnce() -> bool,
    ) -> bool {
        if !self.max_tries.allows_another(tries) {
            return false;
        }
        if self.latency_limit_us.is_some_and(|l| elapsed_us() > l) {
            return false;
        }
        !timer_exceeded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_stop_at_max_tries_the_latency_budget_or_the_deadline() {
        let p = RetryPlan {
            max_tries: MaxTries::Limited(3),
            latency_limit_us: None,
        };
        assert!(p.can_retry(1, || 0, || false));
        assert!(p.can_retry(2, || 0, || false));
        assert!(!p.can_retry(3, || 0, || false));
        assert!(!p.can_retry(1, || 0, || true));
        let unlimited = RetryPlan {
            max_tries: MaxTries::Unlimited,
            latency_limit_us: Some(10_000),
        };
        assert!(unlimited.can_retry(1_000, || 9_999, || false));
        assert!(!unlimited.can_retry(1, || 10_001, || false));
        let single = RetryPlan {
            max_tries: MaxTries::Limited(1),
            latency_limit_us: None,
        };
        assert!(!single.can_retry(1, || 0, || false));
    }
}
