//! Issue 24: what a scenario's keys do in the mode that runs it (docs/modes.md). Each test
//! names a key that used to be accepted and then ignored without a word.

use lasthop_scenario::modes::{keys_markdown, Mode};
use lasthop_scenario::Scenario;
use lasthop_tcp::CongestionControl;
use std::path::Path;

/// A scenario over a 10 Mbit/s link (with `link` as the link spec's text), hosts `a` (fixed)
/// and `b` (mobile) with `hosts` appended, and `rest` (flows, middleboxes) after them.
fn scenario(link: &str, hosts: &str, rest: &str) -> Scenario {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("l.toml"), link).unwrap();
    let text = format!(
        "duration = \"10s\"\nlink = \"l.toml\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n{hosts}\n{rest}"
    );
    Scenario::from_str_in(&text, d.path()).unwrap_or_else(|e| panic!("{e}"))
}

const OPTS: lasthop_sim::OutputOptions = lasthop_sim::OutputOptions::ANALYSIS;

const LINK: &str = "[both]\nrate = \"10Mbit\"\ndelay = \"10ms\"\n";
const BULK: &str = "[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = 100000\n";

fn keys(w: &[lasthop_core::spec::Warning]) -> Vec<&str> {
    w.iter().map(|w| w.key.as_str()).collect()
}

#[test]
fn bulk_congestion_control_acts_in_simulation_or_is_refused() {
    // "bbr" was accepted and the run was Linux 2.4 Reno; then simulation refused it. Now the
    // model has BBR (Linux 6.18's), which paces: on hosts that cannot pace (the baseline) it is
    // refused, naming the key, the mode and what works. Emulation runs it (the socket's
    // TCP_CONGESTION).
    let sc = scenario(LINK, "", &format!("{BULK}congestion_control = \"bbr\"\n"));
    let e = sc.check_mode(Mode::Sim).unwrap_err();
    assert_eq!(e.key, "flows[0].congestion_control", "{e}");
    for what in ["pacing", "linux-6.18", "emulation", "\"reno\" or \"cubic\""] {
        assert!(e.message.contains(what), "{e}");
    }
    assert!(sc.check_mode(Mode::Emu).is_ok());
    let e = lasthop_sim::run(&sc, &OPTS).unwrap_err();
    assert!(e.to_string().contains("flows[0].congestion_control"), "{e}");
    // On hosts that pace it runs, on both ends' sockets.
    let paced =
        "[hosts.a.tcp]\npacing = \"when_needed\"\n[hosts.b.tcp]\npacing = \"when_needed\"\n";
    let sc = scenario(
        LINK,
        paced,
        &format!("{BULK}congestion_control = \"bbr\"\n"),
    );
    sc.check_mode(Mode::Sim).unwrap();
    let [server, client] = sc.flows[0].sim_tcp(&sc).unwrap();
    for c in [server.unwrap(), client.unwrap()] {
        assert_eq!(c.congestion_control, CongestionControl::Bbr);
    }
    // Hosts on the profile "linux-6.18" can pace: BBR runs there, over the profile's 6.x
    // functions (`kernel`), and so does the profile's CUBIC beside it.
    let l618 = "[hosts.a.tcp]\nprofile = \"linux-6.18\"\n[hosts.b.tcp]\nprofile = \"linux-6.18\"\n";
    let flows =
        format!("{BULK}congestion_control = \"bbr\"\n{BULK}congestion_control = \"cubic\"\n");
    let sc = scenario(LINK, l618, &flows);
    sc.check_mode(Mode::Sim).unwrap();
    for (f, cc) in [(0, CongestionControl::Bbr), (1, CongestionControl::Cubic)] {
        let [server, client] = sc.flows[f].sim_tcp(&sc).unwrap();
        for c in [server.unwrap(), client.unwrap()] {
            assert_eq!(c.congestion_control, cc);
            assert_eq!(c.kernel, Some(lasthop_tcp::Kernel::Linux618));
        }
    }
    // An algorithm the model lacks is refused in simulation, as before.
    let sc = scenario(LINK, "", &format!("{BULK}congestion_control = \"vegas\"\n"));
    let e = sc.check_mode(Mode::Sim).unwrap_err();
    assert_eq!(e.key, "flows[0].congestion_control", "{e}");
    for what in ["simulation", "emulation", "\"bbr\""] {
        assert!(e.message.contains(what), "{e}");
    }

    // "cubic" takes effect on both ends' sockets, over each host's own configuration.
    let sc = scenario(
        LINK,
        "",
        &format!("{BULK}congestion_control = \"cubic\"\nnodelay = true\nwindow_clamp = 20000\n"),
    );
    let [server, client] = sc.flows[0].sim_tcp(&sc).unwrap();
    for c in [server.unwrap(), client.unwrap()] {
        assert_eq!(c.congestion_control, CongestionControl::Cubic);
        assert!(!c.nagle);
        assert_eq!(c.window_clamp.map(|b| b.0), Some(20000));
    }
    assert_eq!(sc.hosts[0].tcp.congestion_control, CongestionControl::Reno);

    // sndbuf and rcvbuf are the real sockets' buffers: refused in simulation.
    for k in ["sndbuf", "rcvbuf"] {
        let sc = scenario(LINK, "", &format!("{BULK}{k} = 65536\n"));
        let e = sc.check_mode(Mode::Sim).unwrap_err();
        assert_eq!(e.key, format!("flows[0].{k}"), "{e}");
        assert!(e.message.contains("emulation"), "{e}");
    }
}

#[test]
fn a_bulk_flows_congestion_control_changes_the_simulated_run() {
    // The same transfer with and without congestion_control = "cubic" on a lossy link: before
    // the fix both ran Reno and took the same time to the nanosecond.
    let link = "[both]\nrate = \"10Mbit\"\ndelay = \"20ms\"\n[down.queue]\npackets = 20\n";
    let run = |extra: &str| {
        let sc = scenario(
            link,
            "",
            &format!(
                "[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = 3000000\n{extra}"
            ),
        );
        let r = lasthop_sim::run(&sc, &OPTS).unwrap();
        r.connections[0].elapsed()
    };
    assert_ne!(run(""), run("congestion_control = \"cubic\"\n"));
}

#[test]
fn sysctl_congestion_control_is_checked_against_the_allowed_list() {
    // A new namespace may only use the machine's tcp_allowed_congestion_control: "cubic" on a
    // machine that allows "reno bbr" failed in emu with "Operation not permitted"; now it is
    // refused before anything is created, with the command that allows it.
    let sc = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_congestion_control = \"cubic\"\n",
        BULK,
    );
    let e = sc
        .check_machine(&["reno", "bbr"], &["reno", "bbr", "cubic"])
        .unwrap_err();
    assert_eq!(e.key, "hosts.a.sysctl.tcp_congestion_control", "{e}");
    assert!(
        e.message
            .contains("sudo sysctl -w net.ipv4.tcp_allowed_congestion_control=\"reno bbr cubic\""),
        "{e}"
    );
    // Not loaded at all: load it first.
    let e = sc.check_machine(&["reno"], &["reno"]).unwrap_err();
    assert!(
        e.message.contains("sudo modprobe tcp_cubic && sudo sysctl"),
        "{e}"
    );
    // Allowed: fine.
    assert!(sc
        .check_machine(&["reno", "cubic"], &["reno", "cubic"])
        .is_ok());
}

#[test]
fn each_mode_names_the_other_modes_keys_that_do_nothing() {
    // Simulation: a sysctl the model runs differently, and one it has no counterpart of.
    let sc = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_sack = 0\ntcp_fin_timeout = 30\n",
        BULK,
    );
    let w = sc.check_mode(Mode::Sim).unwrap();
    assert_eq!(
        keys(&w),
        ["hosts.a.sysctl.tcp_sack", "hosts.a.sysctl.tcp_fin_timeout"]
    );
    assert!(w[0].message.contains("hosts.a.tcp.sack = true"), "{}", w[0]);
    // ... and quiet when the model runs the same.
    let sc = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_sack = 0\n[hosts.a.tcp]\nsack = false\n[hosts.a.route]\ninitcwnd = 2\n",
        BULK,
    );
    assert_eq!(keys(&sc.check_mode(Mode::Sim).unwrap()), Vec::<&str>::new());

    // Emulation: a model key whose Linux counterpart is not set (Linux's default differs), one
    // set differently, one without counterpart; quiet where they agree.
    let sc = scenario(
        LINK,
        "[hosts.a.tcp]\nsack = false\ntimestamps = true\ninitial_window = 3\nlimited_transmit = false\n[hosts.a.route]\ninitcwnd = 4\n[hosts.b.tcp]\nsack = false\n[hosts.b.sysctl]\ntcp_sack = 0\n",
        BULK,
    );
    let w = sc.check_mode(Mode::Emu).unwrap();
    assert_eq!(
        keys(&w),
        [
            "hosts.a.tcp.initial_window",
            "hosts.a.tcp.sack",
            "hosts.a.tcp"
        ],
        "{w:?}"
    );
    assert!(
        w[0].message
            .contains("runs with hosts.a.route.initcwnd = 4: set hosts.a.route.initcwnd = 3"),
        "{}",
        w[0]
    );
    assert!(
        w[1].message.contains("set hosts.a.sysctl.tcp_sack = 0"),
        "{}",
        w[1]
    );
    assert!(w[2].message.contains("limited_transmit"), "{}", w[2]);
    // `check` shows both tables, each with the mode that reads it.
    let d = sc.describe();
    assert!(
        d.contains("tcp (simulation: the TCP model): sack=false"),
        "{d}"
    );
    assert!(
        d.contains("route (emulation: the host's Linux): initcwnd=4"),
        "{d}"
    );
    assert!(
        d.contains("sysctl (emulation: the host's Linux): tcp_sack=0"),
        "{d}"
    );
}

#[test]
fn inert_combinations_are_warned_about() {
    // An AQM on a direction without a rate never sees a queue.
    let sc = scenario("[down.queue]\npolicy = \"codel\"\n", "", BULK);
    let w = sc.check_mode(Mode::Sim).unwrap();
    assert_eq!(keys(&w), ["down.queue"]);
    assert!(w[0].message.contains("rate is unlimited"), "{}", w[0]);

    // An AQM behind a link send buffer holding more than its target: 9600 B at 64 kbit/s is
    // (9600 - 1500) · 8 / 64000 = 1.0125 s beyond the packet being sent, above CoDel's 5 ms.
    let sc = scenario(
        "[both]\nrate = \"64kbit\"\nlsb = \"9600B\"\n[down.queue]\npolicy = \"codel\"\n",
        "",
        BULK,
    );
    let w = sc.check_mode(Mode::Sim).unwrap();
    assert_eq!(keys(&w), ["down.lsb"]);
    assert!(w[0].message.contains("1.0125s"), "{}", w[0]);
    // One MTU at the same rate: the packet being sent, nothing to warn about.
    let sc = scenario(
        "[both]\nrate = \"64kbit\"\nlsb = \"1500B\"\nlink_ack = false\n[down.queue]\npolicy = \"codel\"\n",
        "",
        BULK,
    );
    assert!(sc.check_mode(Mode::Sim).unwrap().is_empty());

    // ECN marking with no ECN-capable connection, in each mode by its own settings.
    let ecn =
        "[both]\nrate = \"10Mbit\"\n[down.queue]\npolicy = \"codel\"\ncodel = { ecn = true }\n";
    let sc = scenario(ecn, "", BULK);
    for mode in [Mode::Sim, Mode::Emu] {
        let w = sc.check_mode(mode).unwrap();
        assert_eq!(keys(&w), ["down.queue"], "{mode:?}");
        assert!(w[0].message.contains("ECN"), "{}", w[0]);
    }
    let sc = scenario(
        ecn,
        "[hosts.a.tcp]\necn = true\n[hosts.b.tcp]\necn = true\n[hosts.a.sysctl]\ntcp_ecn = 1\n[hosts.b.sysctl]\ntcp_ecn = 1\n",
        BULK,
    );
    assert!(sc.check_mode(Mode::Sim).unwrap().is_empty());
    assert!(sc.check_mode(Mode::Emu).unwrap().is_empty());

    // Middleboxes that match no flow: rate control of the up direction with only a downward
    // bulk flow, RDB of a host that sends no TCP data.
    let sc = scenario(
        LINK,
        "",
        &format!(
            "{BULK}[[middleboxes]]\nkind = \"rate_control\"\ndata_dir = \"up\"\n[[middleboxes]]\nkind = \"rdb\"\nhosts = [\"b\"]\n"
        ),
    );
    let w = sc.check_mode(Mode::Sim).unwrap();
    assert_eq!(
        keys(&w),
        ["middleboxes[0]", "middleboxes[1].hosts"],
        "{w:?}"
    );
}

#[test]
fn tcp_recovery_zero_is_said_not_to_turn_rack_off_on_linux_6_17_and_later() {
    // Linux 6.17 removed RFC 6675 loss recovery: tcp_recovery = 0 leaves RACK on (seen in the
    // seed 000 emulation: lost retransmissions resent at the ACK that SACKs a later one).
    let sc = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_recovery = 0\n[hosts.b.sysctl]\ntcp_recovery = 1\n",
        BULK,
    );
    let w = sc.tcp_recovery_warnings(Some((6, 18)));
    assert_eq!(keys(&w), ["hosts.a.sysctl.tcp_recovery"]);
    assert!(w[0].message.contains("6.17"), "{}", w[0]);
    assert!(sc.tcp_recovery_warnings(Some((6, 16))).is_empty());
    assert!(sc.tcp_recovery_warnings(None).is_empty());
}

#[test]
fn the_emulated_hosts_loss_detection_follows_the_kernel_and_the_sysctls() {
    // (RACK, tail loss probes) of the hosts' own Linux, for the RTO inference.
    let off = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_recovery = 0\ntcp_early_retrans = 0\n",
        BULK,
    );
    assert_eq!(off.emulated_rack_tlp(Some((6, 16))), (false, false));
    assert_eq!(
        off.emulated_rack_tlp(Some((6, 18))),
        (true, false),
        "6.17+: RACK regardless"
    );
    let defaults = scenario(LINK, "", BULK);
    assert_eq!(defaults.emulated_rack_tlp(Some((6, 18))), (true, true));
    let no_sack = scenario(LINK, "[hosts.b.sysctl]\ntcp_sack = 0\n", BULK);
    assert_eq!(no_sack.emulated_rack_tlp(Some((6, 18))), (false, false));
}

#[test]
fn thin_dupack_is_said_to_do_nothing_on_linux_4_13_and_later() {
    let sc = scenario(
        LINK,
        "",
        "[[flows]]\nkind = \"thin\"\nfrom = \"a\"\nto = \"b\"\npayload = 100\nitt = 50\nduration = \"5s\"\ntcp = { nagle = false, thin_dupack = true }\n",
    );
    let w = sc.thin_dupack_warnings(Some((6, 18))).unwrap();
    assert_eq!(keys(&w), ["flows[0].tcp.thin_dupack"]);
    assert!(w[0].message.contains("4.13"), "{}", w[0]);
    assert!(sc.thin_dupack_warnings(Some((4, 12))).unwrap().is_empty());
}

#[test]
fn modes_doc_is_generated_from_the_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/modes.md");
    let want = keys_markdown();
    if std::env::var_os("LASTHOP_WRITE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "docs/modes.md differs from modes::keys_markdown(): regenerate it with LASTHOP_WRITE_DOCS=1 cargo test -p lasthop-scenario modes_doc"
    );
}

#[test]
fn a_sender_without_its_congestion_control_is_warned_of_the_machines_default() {
    // Host a sends the bulk transfer; its model runs Reno (the default profile), the machine's
    // default is BBR: emulation would send with BBR, so a warning names the sysctl to set.
    // Host b only ACKs: nothing to say of it.
    let sc = scenario(LINK, "", BULK);
    let w = sc.default_cc_warnings("bbr").unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].key, "hosts.a.sysctl.tcp_congestion_control");
    assert!(
        w[0].message.contains("\"bbr\"") && w[0].message.contains("\"reno\""),
        "{}",
        w[0].message
    );
    // The same algorithm as the model, the sysctl set, or the flow's own choice: no warning.
    assert!(sc.default_cc_warnings("reno").unwrap().is_empty());
    let set = scenario(
        LINK,
        "[hosts.a.sysctl]\ntcp_congestion_control = \"cubic\"\n",
        BULK,
    );
    assert!(set.default_cc_warnings("bbr").unwrap().is_empty());
    let per_flow = scenario(
        LINK,
        "",
        "[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = 100000\ncongestion_control = \"reno\"\n",
    );
    assert!(per_flow.default_cc_warnings("bbr").unwrap().is_empty());
}

#[test]
fn clock_phase_is_checked_and_refused_where_it_cannot_act() {
    let load = |top: &str, hosts: &str| {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), LINK).unwrap();
        let text = format!(
            "duration = \"10s\"\nlink = \"l.toml\"\n{top}\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n{hosts}\n{BULK}"
        );
        Scenario::from_str_in(&text, d.path())
    };
    let l618 = "[hosts.a.tcp]\nprofile = \"linux-6.18\"\n[hosts.b.tcp]\nprofile = \"linux-6.18\"\n";
    // A value that is none of the three forms names the key and what is allowed.
    let e = load("clock_phase = \"booted\"", l618).unwrap_err();
    assert_eq!(e.key, "clock_phase", "{e}");
    for what in ["\"booted\"", "\"per_host\"", "\"shared\"", "duration"] {
        assert!(e.message.contains(what), "{e}");
    }
    // One kernel has one HZ: hosts at 250 and 100 cannot share a clock.
    let hz = "[hosts.a.tcp]\nprofile = \"linux-6.18\"\n[hosts.b.tcp]\nprofile = \"linux-6.18\"\nhz = 100\n";
    let e = load("clock_phase = \"shared\"", hz).unwrap_err();
    assert_eq!(e.key, "clock_phase", "{e}");
    for what in ["250", "100", "tcp.hz"] {
        assert!(e.message.contains(what), "{e}");
    }
    assert!(load("clock_phase = \"per_host\"", hz).is_ok());
    // Simulation: quiet with the timer wheel; a warning where no host runs it (every timer
    // fires on time, whatever the phase).
    let sc = load("clock_phase = \"5ms\"", l618).unwrap();
    assert!(!keys(&sc.check_mode(Mode::Sim).unwrap()).contains(&"clock_phase"));
    let sc = load("clock_phase = \"5ms\"", "").unwrap();
    let w = sc.check_mode(Mode::Sim).unwrap();
    let w = w
        .iter()
        .find(|w| w.key == "clock_phase")
        .expect("a warning");
    assert!(w.message.contains("timer_wheel"), "{}", w.message);
    // 6.x CUBIC reads the clock too (`tcp_jiffies32`), with the wheel off.
    let cubic = "[hosts.a.tcp]\nprofile = \"linux-6.18\"\ntimer_wheel = false\ncongestion_control = \"cubic\"\n[hosts.b.tcp]\nprofile = \"linux-6.18\"\ntimer_wheel = false\n";
    let sc = load("clock_phase = \"5ms\"", cubic).unwrap();
    assert!(!keys(&sc.check_mode(Mode::Sim).unwrap()).contains(&"clock_phase"));
    // Emulation: the namespaces share the machine's kernel; only "shared" (or nothing) runs.
    for given in ["clock_phase = \"5ms\"", "clock_phase = \"per_host\""] {
        let e = load(given, l618)
            .unwrap()
            .check_mode(Mode::Emu)
            .unwrap_err();
        assert_eq!(e.key, "clock_phase", "{e}");
        assert!(e.message.contains("emulation"), "{e}");
    }
    for ok in ["clock_phase = \"shared\"", ""] {
        assert!(load(ok, l618).unwrap().check_mode(Mode::Emu).is_ok());
    }
}
