//! The client process's CPU time over a run, as its `RunResult`
//! keeps it. Data only: [`crate::warnings`]' client-bottleneck check reads it (and
//! re-exports [`ClientCpu`]).

use serde::{Deserialize, Serialize};

/// The client process's CPU time over the run, from `getrusage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientCpu {
    /// User and system CPU seconds of the whole process.
    pub cpu_s: f64,
    pub wall_s: f64,
    /// `-j` threads, capped by the CPUs the process may use.
    pub threads: usize,
    /// The CPUs its cgroup's quota allows (`cpu.max`), when one limits the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<f64>,
    /// Seconds its `-j` threads were ready to run but waited for a CPU (run-queue
    /// wait: a quota's throttling and other processes' claims on the CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_s: Option<f64>,
}

impl ClientCpu {
    /// The CPUs the threads could have used: one each, within the cgroup's quota.
    pub fn usable(&self) -> f64 {
        let threads = self.threads.max(1) as f64;
        self.cpu_limit.map_or(threads, |l| l.min(threads))
    }

    /// CPU time over what the threads could have used: 1.0 is every thread busy.
    pub fn usage(&self) -> f64 {
        self.cpu_s / (self.wall_s * self.usable())
    }

    /// The share of the run the threads were running or ready to run (waiting for a
    /// CPU): near 1.0 they never waited on the server.
    pub fn ready(&self) -> Option<f64> {
        let wait = self.wait_s?;
        Some((self.cpu_s + wait) / (self.wall_s * self.threads.max(1) as f64))
    }
}
