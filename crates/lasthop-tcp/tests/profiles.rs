//! Every profile, with the main recovery switches on and off, grows its window: a lossless
//! transfer runs at the link's speed. A switch that left the window stuck (as PRR, RACK and TLP
//! all off once did with the 6.18 growth gate) shows as a transfer several times too slow.
//!
//! The wire is seed 000's e0 (`common::Sim`): 64 kbit/s, 300 ms each way, no queue limit, no
//! loss. 100 segments of 536 bytes take 100 × 72 ms = 7.2 s on the link. With the handshake
//! (about 0.6 s) and slow start from two segments to the path's 9 (2, 4, 8, 16: three round
//! trips of about 0.7 s) the transfer ends near 10 s. A window stuck at two segments needs 50
//! round trips of 600 ms + 2 × 72 ms: about 37 s (the 6.18 fault measured 35.9 s). The bound
//! is 15 s.

mod common;

use common::*;
use lasthop_tcp::{CongestionControl, Event, InitialWindow, Profile, TcpConfig};

const SEGMENTS: u64 = 100;

/// When the client has received all the data, if it has.
fn finish(cfg: TcpConfig) -> Option<f64> {
    let mut sim = Sim::new(cfg.clone(), cfg, SEGMENTS * 536);
    sim.run(ms(60_000.0));
    let mut got = 0;
    for (t, e) in &sim.client_events {
        if let Event::Delivered(n) = e {
            got += n;
            if got >= SEGMENTS * 536 {
                return Some(t.0 as f64 / 1e9);
            }
        }
    }
    None
}

#[test]
fn every_profile_and_switch_grows_its_window() {
    let profiles = [
        ("linux-2.4 (default)", TcpConfig::default()),
        ("linux-2.3.99", Profile::Linux2399.config()),
        ("linux-3.16", Profile::Linux316.config()),
        ("linux-6.18", Profile::Linux618.config()),
    ];
    let mut slow = Vec::new();
    for (name, base) in profiles {
        for cc in [CongestionControl::Reno, CongestionControl::Cubic] {
            for bits in 0..8u8 {
                let cfg = TcpConfig {
                    congestion_control: cc,
                    hystart: cc == CongestionControl::Cubic && base.hystart,
                    prr: bits & 1 != 0,
                    rack: bits & 2 != 0 && base.sack,
                    tlp: bits & 4 != 0,
                    // Two segments, so that the window must grow (6.18's ten would fill the
                    // path at once).
                    initial_window: InitialWindow::Segments(2),
                    ..base.clone()
                };
                let what = format!(
                    "{name} {cc:?} prr {} rack {} tlp {}",
                    cfg.prr, cfg.rack, cfg.tlp
                );
                match finish(cfg) {
                    Some(t) if t < 15.0 => {}
                    other => slow.push(format!("{what}: {other:?} s")),
                }
            }
        }
    }
    assert!(
        slow.is_empty(),
        "too slow or unfinished (bound 15 s):\n{}",
        slow.join("\n")
    );
}
