//! The RTO inference against the TCP model's own timeouts on a whole shipped experiment whose
//! senders are the model's Linux 6.18 (`experiments/seed000-emu-sim-linux618.toml`, the
//! simulated twin of seed 000's emulated cells): under RED and ECN on e0 a lost retransmission
//! waits for the timer while SACKs for new data keep arriving every 72 ms, so the timer's
//! resend never follows 100 ms (rto_gap / 2) without an ACK. (The r6 cells and 2.4's rules are
//! `crates/lasthop-sim/tests/rto_inference.rs`.)

use lasthop_experiment::Experiment;
use lasthop_sim::OutputOptions;
use std::path::Path;

#[test]
fn inferred_timeouts_are_the_models_on_the_linux618_twin() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/seed000-emu-sim-linux618.toml");
    let exp = Experiment::load(&spec).unwrap_or_else(|e| panic!("{e}"));
    let (mut inferred, mut model) = (0, 0);
    for run in exp.runs() {
        let r = lasthop_sim::run(&exp.scenario(run), &OutputOptions::ANALYSIS)
            .unwrap_or_else(|e| panic!("{e}"));
        let i: u64 = r.connections.iter().map(|c| c.data().rtos).sum();
        // The data senders' timeouts (the fixed host's), SYN retransmissions included, which
        // the analysis counts as RTOs.
        let m: u64 = r
            .tcp_model
            .iter()
            .filter(|(host, _)| host == "fixed")
            .map(|(_, c)| c.stats.rtos + c.stats.syn_retransmits)
            .sum();
        assert!(i <= m, "{run:?}: {i} RTOs inferred, the model took {m}");
        inferred += i;
        model += m;
    }
    // Before the lost-retransmission clause of rule 3 the inference found 86 of 109. The
    // model takes 49 since session 20 (the timer wheel and the PSH marks: r6 BL 1.40 timeouts
    // per connection, the kernel's; 1.65 before); the floor only keeps the check from passing
    // on a twin that hardly times out.
    assert!(model >= 40, "the model took only {model} timeouts");
    assert!(
        100 * inferred >= 97 * model,
        "{inferred} RTOs inferred of the model's {model}"
    );
}
