//! The outage windows of a run, from what its clients saw: each client's spells out
//! of service (from the failure that began one to the first success after it) and
//! the run's successful transactions per tenth of a second. Spells that overlap make
//! one window; the throughput before it and its return come from the tenths. Pure:
//! instants on the run's clock in, Unix µs out (shifted by what the caller says).

use super::Outage;

/// The throughput's resolution: successes are counted per this many µs.
pub const BIN_US: i64 = 100_000;
/// The level before an outage is the throughput over at most this long before it...
const LEVEL_SPAN_US: i64 = 10_000_000;
/// ... and at least this long, else it is not known.
const LEVEL_MIN_US: i64 = 1_000_000;
/// Throughput is back when a second's worth of successes is this share of the level.
const BACK_SHARE: f64 = 0.95;
/// The span the return is measured over, in bins (one second).
const BACK_BINS: usize = (1_000_000 / BIN_US) as usize;

/// One client's spell out of service, on the run's clock (µs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spell {
    /// pgbench's client number.
    pub client: usize,
    /// Its transaction (or connection attempt) that failed first.
    pub first_failure_us: i64,
    /// Its last success before that, if it had one.
    pub last_success_before_us: Option<i64>,
    /// Its first success after it; `None` if it had none before the end.
    pub first_success_after_us: Option<i64>,
    /// Its transactions that failed in the spell.
    pub failed: i64,
    /// Of those, the ones in doubt (the server may have committed them).
    pub in_doubt: i64,
    /// Its connections made again in the spell.
    pub reconnects: i64,
    /// When it gave up connecting again (`--reconnect-timeout`), ending the spell
    /// unrecovered.
    pub gave_up_us: Option<i64>,
}

/// Successful transactions per [`BIN_US`] from an origin on the run's clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuccessBins {
    origin_us: i64,
    counts: Vec<u32>,
}

impl SuccessBins {
    pub fn new(origin_us: i64) -> SuccessBins {
        SuccessBins {
            origin_us,
            counts: Vec::new(),
        }
    }

    /// A transaction succeeded at `end_us` (before the origin: not counted).
    #[inline]
    pub fn add(&mut self, end_us: i64) {
        let Ok(bin) = usize::try_from((end_us - self.origin_us) / BIN_US) else {
            return;
        };
        if bin >= self.counts.len() {
            self.counts.resize(bin + 1, 0);
        }
        self.counts[bin] += 1;
    }

    /// The bin holding `us`, counted from the origin (clamped at 0).
    fn bin_of(&self, us: i64) -> usize {
        usize::try_from((us - self.origin_us).div_euclid(BIN_US)).unwrap_or(0)
    }

    /// Successes in bins `from..to` (bins past the last counted are empty).
    fn sum(&self, from: usize, to: usize) -> u64 {
        let to = to.min(self.counts.len());
        let from = from.min(to);
        self.counts[from..to].iter().map(|&n| u64::from(n)).sum()
    }
}

/// The outage windows of `spells` (any order), for a run whose clients began at the
/// bins' origin and ended at `end_us`; `epoch_shift_us` turns the run's clock into
/// Unix µs.
pub fn outages(
    spells: &[Spell],
    bins: &SuccessBins,
    end_us: i64,
    epoch_shift_us: i64,
) -> Vec<Outage> {
    let mut sorted: Vec<&Spell> = spells.iter().collect();
    sorted.sort_by_key(|s| (s.first_failure_us, s.client));
    let mut groups: Vec<Vec<&Spell>> = Vec::new();
    // The end of the window being built: the latest first success after (`None`: a
    // spell of it lasted to the run's end).
    let mut open_until: Option<Option<i64>> = None;
    for spell in sorted {
        let joins = match open_until {
            Some(None) => true,
            Some(Some(until)) => spell.first_failure_us <= until,
            None => false,
        };
        if joins {
            groups.last_mut().expect("a window is open").push(spell);
            let until = open_until.flatten();
            open_until = Some(
                until
                    .zip(spell.first_success_after_us)
                    .map(|(a, b)| a.max(b)),
            );
        } else {
            groups.push(vec![spell]);
            open_until = Some(spell.first_success_after_us);
        }
    }
    let mut outages = Vec::with_capacity(groups.len());
    let mut previous_back: Option<i64> = None;
    for group in groups {
        let w = window(&group, bins, end_us, previous_back);
        previous_back = w.all_back_unix_us.or(w.first_success_after_unix_us);
        outages.push(w);
    }
    for w in &mut outages {
        shift(w, epoch_shift_us);
    }
    outages
}

/// One window from its spells (on the run's clock; shifted after). `after` is when
/// the previous window was over: the level before this one is measured from then.
fn window(group: &[&Spell], bins: &SuccessBins, end_us: i64, after: Option<i64>) -> Outage {
    let first_failure = group.iter().map(|s| s.first_failure_us).min().unwrap_or(0);
    let last_success_before = group
        .iter()
        .filter_map(|s| s.last_success_before_us)
        .filter(|&t| t < first_failure)
        .max();
    let successes: Vec<Option<i64>> = group.iter().map(|s| s.first_success_after_us).collect();
    let first_success_after = successes.iter().flatten().min().copied();
    let all_back = successes
        .iter()
        .try_fold(i64::MIN, |m, s| s.map(|s| m.max(s)));
    // Not over (no client of it had a success again): it lasted at least until the
    // last of its clients gave up, or, for one still out, the run's end.
    let seen_until = first_success_after.is_none().then(|| {
        group
            .iter()
            .map(|s| s.gave_up_us.unwrap_or(end_us))
            .max()
            .unwrap_or(end_us)
            .max(first_failure)
    });
    let mut clients: Vec<usize> = group.iter().map(|s| s.client).collect();
    clients.sort_unstable();
    clients.dedup();
    let tps_before = level_before(bins, first_failure, after);
    let back = tps_before
        .zip(first_success_after)
        .and_then(|(level, from)| back_at(bins, level, from, end_us));
    Outage {
        last_success_before_unix_us: last_success_before,
        first_failure_unix_us: first_failure,
        first_success_after_unix_us: first_success_after,
        all_back_unix_us: all_back,
        clients: clients.len(),
        failed_transactions: group.iter().map(|s| s.failed).sum(),
        in_doubt: group.iter().map(|s| s.in_doubt).sum(),
        reconnects: group.iter().map(|s| s.reconnects).sum(),
        gave_up: group.iter().filter(|s| s.gave_up_us.is_some()).count(),
        seen_until_unix_us: seen_until,
        tps_before,
        back_to_95_unix_us: back,
    }
}

/// Successful transactions per second over the whole bins in the ten seconds before
/// `until` (from `after` at the earliest, and the origin); `None` under a second.
fn level_before(bins: &SuccessBins, until: i64, after: Option<i64>) -> Option<f64> {
    let from = (until - LEVEL_SPAN_US)
        .max(after.unwrap_or(i64::MIN))
        .max(bins.origin_us);
    // Whole bins only: the first at or after `from`, up to the one holding `until`.
    let first = bins.bin_of(from + BIN_US - 1);
    let last = bins.bin_of(until);
    let span_us = (last.saturating_sub(first)) as i64 * BIN_US;
    (span_us >= LEVEL_MIN_US).then(|| bins.sum(first, last) as f64 / (span_us as f64 / 1e6))
}

/// The start of the first second, from the bin holding `from` on, whose successes
/// reach 95% of `level` per second; `None` if none did before `end_us`.
fn back_at(bins: &SuccessBins, level: f64, from: i64, end_us: i64) -> Option<i64> {
    let wanted = BACK_SHARE * level * (BACK_BINS as i64 * BIN_US) as f64 / 1e6;
    let whole = bins.bin_of(end_us);
    (bins.bin_of(from)..whole.saturating_sub(BACK_BINS - 1))
        .find(|&b| bins.sum(b, b + BACK_BINS) as f64 >= wanted)
        .map(|b| (bins.origin_us + b as i64 * BIN_US).max(from))
}

fn shift(w: &mut Outage, by: i64) {
    let s = |t: &mut Option<i64>| *t = t.map(|t| t + by);
    s(&mut w.last_success_before_unix_us);
    w.first_failure_unix_us += by;
    s(&mut w.first_success_after_unix_us);
    s(&mut w.all_back_unix_us);
    s(&mut w.back_to_95_unix_us);
    s(&mut w.seen_until_unix_us);
}
