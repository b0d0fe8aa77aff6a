//! The link's meter (router-queue length over time, serializer busy time) against a timeline
//! worked out by hand: 1000-byte packets at 8 Mbit/s take 1 ms each; a link send buffer of one
//! packet (a wired router) leaves the backlog in the router queue.

mod common;

use common::MS;
use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::{Dir, Link, LinkSpec, LogLevel};

fn udp(len: usize) -> Packet {
    common::udp(len, 5000, 0)
}

fn run_until(l: &mut Link, until: Time) {
    while let Some(t) = l.poll_timeout().filter(|&t| t <= until) {
        l.handle_timeout(t);
        while l.poll_output().is_some() {}
    }
}

const WIRED: &str = r#"
[both]
rate = "8Mbit"
delay = "5ms"
lsb = "1000B"
link_ack = false
"#;

#[test]
fn queue_mean_max_and_busy_time_by_hand() {
    for level in [LogLevel::All, LogLevel::None] {
        let cfg = LinkSpec::config_from_str(WIRED).unwrap();
        let mut l = Link::new(cfg, Seeds::new(1, 0), level);
        // Three packets at 0: the first goes straight into the LSB and on the wire, two wait.
        // Queue: 2 packets over [0, 1 ms], 1 over [1, 2 ms], 0 after. A fourth at 10 ms waits
        // for nothing.
        for _ in 0..3 {
            l.push(Time(0), Dir::Down, udp(1000));
        }
        run_until(&mut l, Time(10 * MS));
        l.push(Time(10 * MS), Dir::Down, udp(1000));
        run_until(&mut l, Time(20 * MS));
        let m = l.meter(Dir::Down).reading(Time(20 * MS));
        // ∫ q dt = 2·1 + 1·1 = 3 packet·ms over 20 ms.
        assert!(
            (m.queue_mean - 3.0 / 20.0).abs() < 1e-12,
            "{level:?}: {m:?}"
        );
        assert_eq!(m.queue_max, 2, "{level:?}");
        // Four transmissions of 1 ms each.
        assert_eq!(m.busy_ns, 4 * MS, "{level:?}");
        let up = l.meter(Dir::Up).reading(Time(20 * MS));
        assert_eq!((up.queue_max, up.busy_ns), (0, 0));
    }
}

#[test]
fn a_transmission_in_progress_counts_up_to_the_end() {
    let cfg = LinkSpec::config_from_str(WIRED).unwrap();
    let mut l = Link::new(cfg, Seeds::new(1, 0), LogLevel::None);
    l.push(Time(0), Dir::Down, udp(1000));
    l.push(Time(0), Dir::Down, udp(1000));
    run_until(&mut l, Time(MS + MS / 2));
    // The second packet started at 1 ms: 1 ms + 0.5 ms busy at 1.5 ms; the queue held one
    // packet over [0, 1 ms].
    let m = l.meter(Dir::Down).reading(Time(MS + MS / 2));
    assert_eq!(m.busy_ns, MS + MS / 2);
    assert!((m.queue_mean - 1.0 / 1.5).abs() < 1e-12, "{m:?}");
}
