#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lasthop_fuzz::scenario_spec(data));
