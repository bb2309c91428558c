//! Network namespaces for tests that need machines of their own (as root).

/// A network namespace of its own, linked to this one by a veth pair: this side
/// `10.213.K.1`, the namespace's side `10.213.K.2`. Removed (with the link) on drop.
pub struct NetNs {
    pub name: String,
    k: u8,
}

impl NetNs {
    /// `None` when this machine gives no namespaces: not root, no `ip` (iproute2), or
    /// a container that may not make them.
    pub fn create(k: u8) -> Option<NetNs> {
        let root = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
        if !root {
            return None;
        }
        let tag = format!("{}{k}", std::process::id() % 100_000);
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let ns = NetNs {
            name: format!("pgbr-{tag}"),
            k,
        };
        if !ip(&["netns", "add", &ns.name]) {
            std::mem::forget(ns);
            return None;
        }
        let (here, there) = (format!("pgbrh{tag}"), format!("pgbrn{tag}"));
        let (here_ip, there_ip) = (format!("10.213.{k}.1/30"), format!("10.213.{k}.2/30"));
        let linked = ip(&["link", "add", &here, "type", "veth", "peer", "name", &there])
            && ip(&["link", "set", &there, "netns", &ns.name])
            && ip(&["addr", "add", &here_ip, "dev", &here])
            && ip(&["link", "set", &here, "up"])
            && ip(&["-n", &ns.name, "addr", "add", &there_ip, "dev", &there])
            && ip(&["-n", &ns.name, "link", "set", &there, "up"])
            && ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        assert!(linked, "could not link network namespace {}", ns.name);
        Some(ns)
    }
}

impl NetNs {
    /// Cuts the link silently, as a lost network does: what this side sends to the
    /// namespace is dropped (a blackhole route), so connections there hang, no error
    /// comes back, and a new connection's SYN gets no answer.
    pub fn partition(&self) {
        let ok = std::process::Command::new("ip")
            .args([
                "route",
                "add",
                "blackhole",
                &format!("10.213.{}.2/32", self.k),
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "could not partition {}", self.name);
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args([
                "route",
                "del",
                "blackhole",
                &format!("10.213.{}.2/32", self.k),
            ])
            .output();
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}
