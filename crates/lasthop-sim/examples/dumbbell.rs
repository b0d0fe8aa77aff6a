//! Runs seed 004's dumbbell without outputs, for profiling: `cargo run --release -p lasthop-sim --example dumbbell`.
fn main() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/seed004-dumbbell-100.toml");
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
