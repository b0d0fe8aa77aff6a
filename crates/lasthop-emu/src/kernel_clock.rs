//! The emulating kernel's jiffies clock at the run's time 0, so that a simulated twin can run
//! its timer wheels on the same grid (the scenario key `clock_phase`, docs/simulator.md).
//!
//! Linux keeps its tick on whole multiples of `TICK_NSEC` of `CLOCK_MONOTONIC`
//! (`tick_init_jiffy_update`: "Ensure that the tick is aligned to a multiple of TICK_NSEC"), and
//! `jiffies` counts those ticks from a constant offset. `/proc/timer_list` prints a monotonic
//! time (`now at N nsecs`) and `jiffies: J` (root only), so two readings, at the start and the
//! end of a run, give HZ (the ticks between them) and the offset, hence where the jiffies stand
//! at time 0. The wheel's buckets are whole multiples of 8, 64 and 512 jiffies of that count,
//! so the phase is reduced to the model's 2^15-jiffy cycle.

/// One reading of `/proc/timer_list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// `CLOCK_MONOTONIC` ns (`now at`).
    pub now_ns: u64,
    /// `jiffies` a few microseconds later.
    pub jiffies: u64,
}

/// The kernel's tick rate and its jiffies at the run's time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct KernelClock {
    /// `CONFIG_HZ`, from the ticks counted over the run.
    pub hz: u32,
    /// The simulator's `clock_phase` for this run: jiffies at time 0 are
    /// `phase_ns / TICK_NSEC` (modulo 2^15) and the next tick comes `TICK_NSEC - phase_ns %
    /// TICK_NSEC` after time 0.
    pub phase_ns: u64,
}

/// Readings taken at once: a tick between the two lines of one reading shows as an outlier,
/// which [`infer`] outvotes.
const READS: usize = 5;

/// Reads `/proc/timer_list` a few times (empty when it cannot be read: not root, no procfs).
pub fn read() -> Vec<Reading> {
    (0..READS)
        .filter_map(|_| std::fs::read_to_string("/proc/timer_list").ok())
        .filter_map(|t| parse(&t))
        .collect()
}

/// The first `now at` and the first `jiffies:` of a `/proc/timer_list` text.
pub fn parse(text: &str) -> Option<Reading> {
    let field = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some(Reading {
        now_ns: field("now at ")?,
        jiffies: field("jiffies: ")?,
    })
}

/// Linux's `CONFIG_HZ` choices.
const HZ: [u32; 4] = [100, 250, 300, 1000];

/// The kernel clock from readings at the start and the end of a run whose time 0 is `t0_ns`
/// (`CLOCK_MONOTONIC`). None when the readings are too close together (under 50 ms) or their
/// tick rate is none of Linux's.
pub fn infer(start: &[Reading], end: &[Reading], t0_ns: u64) -> Option<KernelClock> {
    let (a, b) = (start.first()?, end.last()?);
    let span = b.now_ns.checked_sub(a.now_ns)?;
    if span < 50_000_000 {
        return None;
    }
    let rate = b.jiffies.checked_sub(a.jiffies)? as f64 * 1e9 / span as f64;
    let hz = HZ
        .into_iter()
        .find(|&h| (rate / f64::from(h) - 1.0).abs() < 0.05)?;
    // TICK_NSEC = (NSEC_PER_SEC + HZ/2) / HZ.
    let tick = (1_000_000_000 + u64::from(hz) / 2) / u64::from(hz);
    // jiffies = now / TICK_NSEC + offset: the offset most readings agree on.
    let offsets: Vec<i128> = start
        .iter()
        .chain(end)
        .map(|r| i128::from(r.jiffies) - i128::from(r.now_ns / tick))
        .collect();
    let offset = *offsets
        .iter()
        .max_by_key(|&&o| (offsets.iter().filter(|&&x| x == o).count(), -o))?;
    let cycle = 1i128 << 15;
    let at_t0 = (i128::from(t0_ns / tick) + offset).rem_euclid(cycle) as u64;
    Some(KernelClock {
        hz,
        phase_ns: at_t0 * tick + t0_ns % tick,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 69845692515177 nsecs\n\ncpu: 0\n clock 0:\n  .base:       00000000\n  .last_tick      : 69845668000000 nsecs\n  .idle_jiffies   : 4312353633\njiffies: 4312353640\n\ncpu: 1\njiffies: 4312353641\n";

    #[test]
    fn parse_takes_the_first_now_and_jiffies() {
        assert_eq!(
            parse(TEXT),
            Some(Reading {
                now_ns: 69_845_692_515_177,
                jiffies: 4_312_353_640
            })
        );
        assert_eq!(parse("now at 5 nsecs\n"), None);
    }

    #[test]
    fn phase_by_hand_at_hz_250() {
        // At 69 845 692.515 177 ms, jiffy 4 312 353 640: the offset is 4 312 353 640 -
        // 17 461 423 (whole 4 ms ticks) = 4 294 892 217. Ten seconds later 2 500 more.
        let a = Reading {
            now_ns: 69_845_692_515_177,
            jiffies: 4_312_353_640,
        };
        let b = Reading {
            now_ns: a.now_ns + 10_000_000_000,
            jiffies: a.jiffies + 2_500,
        };
        // One reading whose jiffies line came after a tick the `now` line had not seen.
        let late = Reading {
            now_ns: 69_845_695_999_990,
            jiffies: 4_312_353_641 + 1,
        };
        // Time 0 at 69 845 700 000 123 ns: tick 17 461 425 and 123 ns into it; jiffies there
        // 17 461 425 + 4 294 892 217 = 4 312 353 642, which is 19 306 mod 2^15 (131 602 x 32 768
        // + 19 306): the phase is 19 306 x 4 ms + 123 ns.
        let k = infer(&[a, late, a], &[b, b], 69_845_700_000_123).unwrap();
        assert_eq!(k.hz, 250);
        assert_eq!(k.phase_ns, 19_306 * 4_000_000 + 123);
        // Too short a run to count the ticks, or a rate that is no HZ: nothing.
        assert_eq!(infer(&[a], &[a], 0), None);
        let odd = Reading {
            now_ns: b.now_ns,
            jiffies: a.jiffies + 1_800,
        };
        assert_eq!(infer(&[a], &[odd], 0), None);
    }
}
