//! Runs seed 004's dumbbell (or the shipped scenario named by `LH_SCEN`) without outputs, N times, for
//! profiling: `cargo run --release -p lasthop-sim --example dumbbell [N]`.
fn main() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../examples/scenarios/{}.toml",
        std::env::var("LH_SCEN").unwrap_or("seed004-dumbbell-100".into())
    ));
    let s = lasthop_scenario::Scenario::load(p).unwrap();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    for _ in 0..n {
        let r = lasthop_sim::run(&s, &lasthop_sim::OutputOptions::default()).unwrap();
        println!(
            "{} events, {} bottleneck packets",
            r.events, r.link[0].released
        );
    }
}
