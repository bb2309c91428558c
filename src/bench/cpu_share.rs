//! What CPU the client may use, and whether it got it: the CPU quota of the process's
//! cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`; the smallest
//! up the hierarchy), which a container's CPU limit sets, and the time its threads
//! were ready to run but waited for a CPU (`run_delay` of `/proc/thread-self/schedstat`,
//! which counts a quota's throttling and other processes' claims alike). With the CPU
//! time they tell a client starved of CPU, the bottleneck all the same, from an idle one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The calling thread's run-queue wait so far, in nanoseconds.
fn run_delay_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A thread's run-queue wait from [`Waited::start`] to [`Waited::finish`].
pub struct Waited(Option<u64>);

impl Waited {
    pub fn start() -> Waited {
        Waited(run_delay_ns())
    }

    /// Adds the wait since the start to the run's total, ns.
    pub fn finish(self, total_ns: &AtomicU64) {
        if let Some((a, b)) = self.0.zip(run_delay_ns()) {
            total_ns.fetch_add(b.saturating_sub(a), Ordering::Relaxed);
        }
    }
}

/// Whether the kernel tells a thread's run-queue wait.
pub fn wait_measurable() -> bool {
    run_delay_ns().is_some()
}

/// The cgroup's CPU quota of this process in CPUs, when one limits it.
pub fn cpu_limit() -> Option<f64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let limits = cgroups.lines().filter_map(|line| {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let v2 = controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "cpu") {
            return None;
        }
        let (root, mount) = mount_of(&mounts, v2)?;
        let relative = path.strip_prefix(root.as_str()).unwrap_or(path);
        quota_up(&mount, &mount.join(relative.trim_start_matches('/')), v2)
    });
    limits.min_by(f64::total_cmp)
}

/// The root and mount point of the cgroup2 hierarchy, or of v1's with the `cpu`
/// controller.
fn mount_of(mountinfo: &str, v2: bool) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let rest: Vec<&str> = after.split(' ').collect();
        let ok = match (v2, rest.first()?) {
            (true, &"cgroup2") => true,
            (false, &"cgroup") => rest.get(2)?.split(',').any(|o| o == "cpu"),
            _ => false,
        };
        if !ok {
            return None;
        }
        Some((fields.get(3)?.to_string(), PathBuf::from(fields.get(4)?)))
    })
}

/// The smallest quota from `dir` up to the hierarchy's `mount`.
fn quota_up(mount: &Path, dir: &Path, v2: bool) -> Option<f64> {
    let read = |p: PathBuf| std::fs::read_to_string(p).ok();
    let quota = |d: &Path| -> Option<f64> {
        let (q, p) = if v2 {
            let max = read(d.join("cpu.max"))?;
            let mut f = max.split_whitespace();
            (
                f.next()?.parse::<f64>().ok()?,
                f.next()?.parse::<f64>().ok()?,
            )
        } else {
            let q: f64 = read(d.join("cpu.cfs_quota_us"))?.trim().parse().ok()?;
            (q, read(d.join("cpu.cfs_period_us"))?.trim().parse().ok()?)
        };
        (q > 0.0 && p > 0.0).then(|| q / p)
    };
    dir.ancestors()
        .take_while(|d| d.starts_with(mount))
        .filter_map(quota)
        .min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_hierarchies_are_found_in_mountinfo() {
        let info = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                    32 31 0:29 /kube /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mount_of(info, false),
            Some(("/kube".into(), PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")))
        );
        assert_eq!(
            mount_of(info, true),
            Some(("/".into(), PathBuf::from("/sys/fs/cgroup/unified")))
        );
    }

    #[test]
    fn the_smallest_quota_up_the_hierarchy_is_the_limit() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("a/b"));
        std::fs::create_dir_all(&b).unwrap();
        let write = |d: &Path, q: &str| {
            std::fs::write(d.join("cpu.cfs_quota_us"), q).unwrap();
            std::fs::write(d.join("cpu.cfs_period_us"), "100000\n").unwrap();
        };
        write(&a, "50000\n");
        write(&b, "-1\n");
        assert_eq!(quota_up(root.path(), &b, false), Some(0.5));
        std::fs::write(b.join("cpu.max"), "5000 100000\n").unwrap();
        std::fs::write(a.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(quota_up(root.path(), &b, true), Some(0.05));
        assert_eq!(quota_up(root.path(), &a, true), None);
    }

    #[test]
    fn this_thread_s_wait_is_read() {
        // Linux with schedstat (every kernel the project runs on).
        assert!(wait_measurable());
        let total = AtomicU64::new(0);
        let w = Waited::start();
        std::thread::yield_now();
        w.finish(&total);
        assert!(total.load(Ordering::Relaxed) < 1_000_000_000);
    }
}
