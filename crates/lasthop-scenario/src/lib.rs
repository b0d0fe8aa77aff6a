//! Scenario specs: the hosts on each side of the link, their TCP settings, the link spec they share,
//! and the workload. One format for both modes: the emulator reads `sysctl` and `route` (real Linux
//! settings in each host's namespace), the simulator reads `tcp` (its TCP model's switches); both
//! run the access links. Neither ignores the other's keys in silence: [`modes`] says which keys
//! each mode honours, warns about the other mode's keys unless their counterpart agrees, and
//! refuses what a mode cannot do ([`Scenario::check_mode`], `docs/modes.md`).
//!
//! ```toml
//! name = "seed000-e0"
//! seed = 1                             # default 1
//! duration = "300s"                    # hard stop
//! link = "../links/seed000-e0.toml"    # relative to this file
//! log = "all"                          # all | drops | none
//!
//! [hosts.server]
//! side = "fixed"                       # fixed | mobile
//! # address = "198.18.0.1"             # default: fixed 198.18.0.N, mobile 198.19.0.N
//! mtu = "576B"                         # default: the link's MTU, else 1500B
//! access_rate = "10Mbit"               # the host's access link (optional, both modes)
//! access_delay = "1ms"
//! [hosts.server.sysctl]                # emulation: net.ipv4.* in the host's namespace
//! tcp_congestion_control = "reno"
//! tcp_sack = 1
//! [hosts.server.route]                 # emulation: options of the routes across the link
//! initcwnd = 2
//! rto_min = "200ms"
//! [hosts.server.tcp]                   # simulation: TCP model switches (checked by lasthop-tcp)
//!
//! [hosts.mobile]
//! side = "mobile"
//!
//! [hosts.s]                            # a host group: s0, s1, ..., s9
//! side = "fixed"
//! count = 10
//! access_delay = { groups = ["5ms", "10ms"] }   # per member: one value, a list of 10, or
//!                                      # groups (here s0..s4 5 ms, s5..s9 10 ms)
//!
//! [[flows]]                            # one application: a client end and a server end
//! kind = "bulk"                        # the application (lasthop-apps: bulk, cbr)
//! from = "server"                      # the client end's host (it starts the flow)
//! to = "mobile"                        # the server end's host (it listens from time 0)
//! start = "0s"
//! port = 5001                          # the server end's port, default 5000 + index
//! bytes = 188640                       # then the application's own parameters
//! congestion_control = "reno"          # bulk's socket options: congestion_control,
//!                                      # window_clamp, sndbuf, rcvbuf, nodelay (both ends;
//!                                      # simulation: reno/cubic, no sndbuf/rcvbuf)
//! tcp = { nagle = false }              # thin and bulk: TCP model keys for the client's
//!                                      # connections (emulation: its socket options)
//! ```
//!
//! Loading never panics: every problem is a [`SpecError`] naming the key, the value and what is
//! allowed.
//!
//! The files, along the spec's seams as the link crate's `spec/`: [`schema`] (the spec as
//! written), [`config`] (the resolved [`Scenario`] the drivers run), [`validate`] (the checks
//! between them, one file per part: link, hosts and groups, flows, middleboxes), [`describe`]
//! (`lasthop check`'s words), [`link`] (the link model a run builds) and [`modes`] (what each
//! mode honours). Everything is re-exported here for the crate's users; its own files name the
//! file they use.

pub mod config;
pub mod describe;
pub mod link;
pub mod modes;
pub mod schema;
pub mod validate;

pub use config::*;
pub use lasthop_apps::SocketOptions;
pub use modes::{kernel_release, Mode};
pub use schema::*;
pub use validate::groups::per_member;

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::spec::SpecError;
    use lasthop_core::{Dur, Rate};
    use lasthop_link::Dir;
    use std::net::Ipv4Addr;

    fn dir_with_link() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("l.toml"),
            "mtu = \"576B\"\n[both]\nrate = \"64kbit\"\ndelay = \"300ms\"\n",
        )
        .unwrap();
        d
    }

    const BASE: &str = r#"
name = "t"
duration = "30s"
link = "l.toml"
[hosts.server]
side = "fixed"
[hosts.server.sysctl]
tcp_sack = 1
tcp_congestion_control = "reno"
tcp_timestamps = false
[hosts.server.route]
initcwnd = 2
rto_min = "200ms"
[hosts.mobile]
side = "mobile"
[[flows]]
kind = "bulk"
from = "server"
to = "mobile"
bytes = 188640
rcvbuf = "64KiB"
"#;

    #[test]
    fn loads_and_resolves() {
        let d = dir_with_link();
        let s = Scenario::from_str_in(BASE, d.path()).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.hosts[0].address, Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(s.hosts[1].address, Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(s.hosts[0].mtu, 576);
        assert_eq!(s.hosts[0].sysctl[2].1.to_proc(), "0");
        assert_eq!(s.flows[0].port, 5000);
        let lasthop_apps::AppParams::Bulk(b) = &s.flows[0].app else {
            panic!("a bulk flow")
        };
        assert_eq!(b.socket.rcvbuf, Some(65536));
        assert_eq!(b.bytes, 188640);
        assert_eq!(s.hosts[0].route.rto_min, Some(Dur::from_millis(200)));
    }

    #[test]
    fn rdb_middlebox_resolves_its_hosts() {
        let d = dir_with_link();
        let text = format!(
            "{BASE}[hosts.t]\nside = \"fixed\"\ncount = 2\n[[middleboxes]]\nkind = \"rdb\"\nhosts = [\"server\", \"t\"]\npif_limit = 4\n"
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let MiddleboxConfig::Rdb(c) = &s.middleboxes[0] else {
            panic!("an rdb middlebox")
        };
        // server, then the group t's two members t0 and t1 (fixed side: 198.18.0.2, .3).
        let a = |x: u8| std::net::IpAddr::V4(Ipv4Addr::new(198, 18, 0, x));
        assert_eq!(c.senders, [a(1), a(2), a(3)]);
        let e = error_of(&text.replace("[\"server\", \"t\"]", "[\"nobody\"]"));
        assert_eq!(e.key, "middleboxes[0].hosts", "{e}");
        assert!(e.message.contains("\"nobody\""), "{e}");
        let e = error_of(&format!("{BASE}[[middleboxes]]\nkind = \"rdbx\"\n"));
        assert!(e.message.contains("rate_control, rdb"), "{e}");
    }

    #[test]
    fn flow_tcp_tables_become_socket_options_or_name_the_key() {
        let d = dir_with_link();
        let thin = "[[flows]]\nkind = \"thin\"\nfrom = \"server\"\nto = \"mobile\"\npayload = 100\nitt = 30\nduration = \"10s\"\n";
        let text = format!("{BASE}{thin}tcp = {{ nagle = false, thin_dupack = true }}\n");
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let o = s.flows[1].socket_options().unwrap();
        assert_eq!((o.nodelay, o.thin_dupack), (Some(true), Some(true)));
        assert!(s
            .describe()
            .contains("tcp options of its client sockets: nagle=false thin_dupack=true"));
        // The bulk flow without a table has none.
        assert_eq!(
            s.flows[0].socket_options().unwrap(),
            SocketOptions::default()
        );
        // A model key Linux has no socket option for: fine in simulation, an error for emulation.
        let text = format!("{BASE}{thin}tcp = {{ delayed_ack = \"off\" }}\n");
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        assert!(!s.flows[1]
            .tcp
            .as_ref()
            .unwrap()
            .delayed_ack
            .eq(&s.hosts[0].tcp.delayed_ack));
        let e = s.flows[1].socket_options().unwrap_err();
        assert_eq!(e.key, "flows[1].tcp.delayed_ack", "{e}");
        assert!(e.message.contains("set it on the host"), "{e}");
    }

    fn error_of(text: &str) -> SpecError {
        let d = dir_with_link();
        Scenario::from_str_in(text, d.path()).unwrap_err()
    }

    #[test]
    fn a_name_that_is_a_path_is_refused() {
        // The name becomes the default output directory, results/<name>: an absolute path or a
        // climb with ../ would put the results outside the working directory.
        for bad in ["/tmp/x", "../../../x", "..", ".hidden", "-x", "a/b"] {
            let e = error_of(&BASE.replace("name = \"t\"", &format!("name = {bad:?}")));
            assert_eq!(e.key, "name", "{bad}: {e}");
            assert!(
                e.message
                    .contains(&format!("invalid scenario name {bad:?}"))
                    && e.message
                        .contains("allowed 1 to 64 of a-z, A-Z, 0-9, '_', '-' and '.'"),
                "{e}"
            );
        }
        let d = dir_with_link();
        let s = Scenario::from_str_in(
            &BASE.replace("name = \"t\"", "name = \"seed000-e0.v2\""),
            d.path(),
        )
        .unwrap();
        assert_eq!(s.name, "seed000-e0.v2");
    }

    #[test]
    fn host_names_may_not_start_with_a_dash() {
        // A host's name starts hosts.csv's rows and names its capture file `<host>.pcap`.
        let e = error_of(
            &BASE
                .replace("[hosts.mobile]", "[hosts.-mobile]")
                .replace("to = \"mobile\"", "to = \"-mobile\""),
        );
        assert_eq!(e.key, "hosts.-mobile", "{e}");
        assert!(e.message.contains("not starting with '-'"), "{e}");
    }

    #[test]
    fn errors_name_key_and_value() {
        let e = error_of(&BASE.replace("bytes = 188640", "bytes = 188640\nbogus = 1"));
        assert_eq!(e.key, "flows[0].bogus", "{e}");
        assert!(e.message.contains("bogus"), "{e}");

        let e = error_of(&BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"10.0.0.1\"",
        ));
        assert_eq!(e.key, "hosts.mobile.address");
        assert!(
            e.message.contains("10.0.0.1") && e.message.contains("198.18.0.0/15"),
            "{e}"
        );

        let e = error_of(&BASE.replace("to = \"mobile\"", "to = \"nobody\""));
        assert_eq!(e.key, "flows[0].to");
        assert!(
            e.message.contains("\"nobody\"") && e.message.contains("\"mobile\""),
            "{e}"
        );

        let e = error_of(&BASE.replace("side = \"mobile\"", "side = \"wireless\""));
        assert_eq!(e.key, "hosts.mobile.side", "{e}");
        assert!(
            e.message.contains("wireless") && e.message.contains("fixed"),
            "{e}"
        );

        let e = error_of(&BASE.replace("duration = \"30s\"", "duration = 30"));
        assert_eq!(e.key, "duration", "{e}");

        let e = error_of(&BASE.replace("link = \"l.toml\"", "link = \"missing.toml\""));
        assert_eq!(e.key, "link", "{e}");
        assert!(e.message.contains("missing.toml"), "{e}");

        let e = error_of(&BASE.replace("rto_min = \"200ms\"", "rto_min = \"200ms\"\ncwnd = 3"));
        assert_eq!(e.key, "hosts.server.route.cwnd", "{e}");
        assert!(e.message.contains("initcwnd"), "{e}");

        let e = error_of(&BASE.replace("side = \"mobile\"", "side = \"fixed\""));
        assert_eq!(e.key, "flows[0].to", "{e}");
        assert!(e.message.contains("cross the link"), "{e}");

        // Applications: an unknown kind lists the kinds; each kind checks its own keys.
        let e = error_of(&BASE.replace("kind = \"bulk\"", "kind = \"ftp\""));
        assert_eq!(e.key, "flows[0].kind", "{e}");
        assert!(
            e.message.contains("\"ftp\"") && e.message.contains("bulk, cbr, http"),
            "{e}"
        );
        let e = error_of(&BASE.replace("kind = \"bulk\"", "kind = \"cbr\""));
        assert_eq!(e.key, "flows[0].bytes", "a bulk key is not a cbr key: {e}");
        let cbr = "[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"mobile\"\ninterval = \"128ms\"\nduration = \"10s\"\n";
        // The link's MTU is 576 B: at most 548 B of UDP payload.
        let e = error_of(&format!("{BASE}{cbr}payload = \"549B\"\n"));
        assert_eq!(e.key, "flows[1].payload", "{e}");
        assert!(e.message.contains("548"), "{e}");
        let ok = Scenario::from_str_in(
            &format!("{BASE}{cbr}payload = \"548B\"\n"),
            dir_with_link().path(),
        )
        .unwrap();
        assert_eq!(ok.flows[1].kind(), "cbr");
        assert_eq!(ok.flows[1].port, 5001);
    }

    /// Seed 001's shared advertised window: the pool must hold one segment (the link's MTU is
    /// 576 B here, so the mobile host's MSS is 536 B), the peer is across the link.
    #[test]
    fn shared_window_is_checked_and_resolved() {
        let with =
            |t: &str| BASE.replace("side = \"mobile\"\n", &format!("side = \"mobile\"\n{t}\n"));
        let s = Scenario::from_str_in(
            &with("shared_window = { size = \"2KiB\" }"),
            dir_with_link().path(),
        )
        .unwrap();
        assert_eq!(
            s.hosts[1].shared_window,
            Some(SharedWindow {
                peer: Ipv4Addr::new(198, 18, 0, 1),
                size: 2048,
                enforce: SharedWindowAt::Receiver
            }),
            "the one host across the link is the peer"
        );
        assert!(s
            .describe()
            .contains("shared advertised window 2048 B with 198.18.0.1"));
        for (t, key, says) in [
            (
                "shared_window = { size = \"0B\" }",
                "hosts.mobile.shared_window.size",
                "below one MSS",
            ),
            (
                "shared_window = { size = \"535B\" }",
                "hosts.mobile.shared_window.size",
                "allowed 536B..=1GiB",
            ),
            (
                "shared_window = { size = \"-2048B\" }",
                "hosts.mobile.shared_window.size",
                "-2048B",
            ),
            (
                "shared_window = { size = \"2GiB\" }",
                "hosts.mobile.shared_window.size",
                "allowed 536B..=1GiB",
            ),
            (
                "shared_window = { size = \"2KiB\", peer = \"nobody\" }",
                "hosts.mobile.shared_window.peer",
                "\"server\"",
            ),
            (
                "shared_window = { size = \"2KiB\", peer = \"mobile\" }",
                "hosts.mobile.shared_window.peer",
                "across the link",
            ),
            (
                "shared_window = { size = \"2KiB\", enforce = \"sender\" }",
                "hosts.mobile.shared_window.enforce",
                "receiver",
            ),
            (
                "shared_window = { bytes = 2048 }",
                "hosts.mobile.shared_window.bytes",
                "size",
            ),
        ] {
            let e = error_of(&with(t));
            assert_eq!(e.key, key, "{t}: {e}");
            assert!(e.message.contains(says), "{t}: {e}");
        }
        // Two hosts across the link: the peer must be named.
        let two = with("shared_window = { size = \"2KiB\" }").replace(
            "[hosts.mobile]",
            "[hosts.other]\nside = \"fixed\"\n[hosts.mobile]",
        );
        let e = error_of(&two);
        assert_eq!(e.key, "hosts.mobile.shared_window.peer", "{e}");
        assert!(e.message.contains("\"server\", \"other\""), "{e}");
    }

    #[test]
    fn explicit_addresses_and_mtu() {
        let d = dir_with_link();
        let text = BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"198.19.7.9\"\nmtu = \"1500B\"\naccess_rate = \"10Mbit\"\naccess_delay = \"1ms\"",
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        assert_eq!(s.hosts[1].address, Ipv4Addr::new(198, 19, 7, 9));
        assert_eq!(s.hosts[1].mtu, 1500);
        assert_eq!(s.hosts[1].access_rate, Some(Rate(10_000_000)));
        let dup = BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"198.18.0.1\"",
        );
        let e = Scenario::from_str_in(&dup, d.path()).unwrap_err();
        assert!(e.message.contains("server"), "{e}");
    }

    const GROUPS: &str = r#"
duration = "10s"
link = "l.toml"
[hosts.s]
side = "fixed"
count = 10
access_rate = "150Mbit"
access_delay = { groups = ["5.01ms", "10ms", "15ms", "25ms"] }
[hosts.r]
side = "mobile"
count = 10
[[flows]]
kind = "bulk"
from = "s"
to = "r"
bytes = 10240
start = { groups = ["0s", "250ms"] }
"#;

    #[test]
    fn host_groups_expand_with_values_per_member() {
        let d = dir_with_link();
        let s = Scenario::from_str_in(GROUPS, d.path()).unwrap();
        assert_eq!(s.hosts.len(), 20);
        assert_eq!(s.hosts[0].name, "s0");
        assert_eq!(s.hosts[9].name, "s9");
        assert_eq!(s.hosts[10].name, "r0");
        assert_eq!(s.hosts[3].group, Some(("s".to_string(), 3)));
        assert_eq!(s.hosts[9].address, Ipv4Addr::new(198, 18, 0, 10));
        assert_eq!(s.hosts[19].address, Ipv4Addr::new(198, 19, 0, 10));
        // 10 members in 4 groups: 3, 3, 2, 2 (the first groups one larger).
        let ms = |h: &Host| h.access_delay.unwrap().as_nanos() / 10_000;
        let delays: Vec<u64> = s.hosts[..10].iter().map(ms).collect();
        assert_eq!(
            delays,
            [501, 501, 501, 1000, 1000, 1000, 1500, 1500, 2500, 2500]
        );
        assert!(s.hosts[..10]
            .iter()
            .all(|h| h.access_rate == Some(Rate(150_000_000))));
        assert_eq!(s.hosts[10].access_delay, None);
        // One flow per member: s_i -> r_i, default ports 5000 + i, starts by group of 5.
        assert_eq!(s.flows.len(), 10);
        for (i, f) in s.flows.iter().enumerate() {
            assert_eq!((f.from, f.to, f.port), (i, 10 + i, 5000 + i as u16));
            assert_eq!(f.spec, 0);
            assert_eq!(f.member, Some(i as u32));
            let want = if i < 5 { 0 } else { 250 };
            assert_eq!(f.start, Dur::from_millis(want), "flow {i}");
        }
        assert_eq!(s.flows[7].spec_key(), "flows[0] member 7");
        // A list gives one value per member; an explicit port is member 0's.
        let list = GROUPS.replace(
            r#"start = { groups = ["0s", "250ms"] }"#,
            r#"start = ["0s", "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s"]
port = 6000"#,
        );
        let s = Scenario::from_str_in(&list, d.path()).unwrap();
        assert_eq!(s.flows[9].start, Dur::from_secs(9));
        assert_eq!(s.flows[9].port, 6009);
        // A group to one host: every member's flow goes to it, each on its own port.
        let one = GROUPS.replace(
            "[hosts.r]\nside = \"mobile\"\ncount = 10",
            "[hosts.r]\nside = \"mobile\"",
        );
        let s = Scenario::from_str_in(&one, d.path()).unwrap();
        assert_eq!(s.hosts.len(), 11);
        assert!(s.flows.iter().all(|f| f.to == 10));
        assert_eq!(s.flows[3].port, 5003);
        // A member can be named on its own.
        let single = GROUPS
            .replace("from = \"s\"\nto = \"r\"", "from = \"s4\"\nto = \"r7\"")
            .replace(r#"start = { groups = ["0s", "250ms"] }"#, "");
        let s = Scenario::from_str_in(&single, d.path()).unwrap();
        assert_eq!((s.flows.len(), s.flows[0].from, s.flows[0].to), (1, 4, 17));
    }

    #[test]
    fn host_group_errors_name_the_key() {
        let e = error_of(&GROUPS.replace("count = 10\naccess_rate", "count = 0\naccess_rate"));
        assert_eq!(e.key, "hosts.s.count", "{e}");
        assert!(e.message.contains("1 or more"), "{e}");
        let e = error_of(&GROUPS.replace("count = 10\naccess_rate", "count = 300\naccess_rate"));
        assert_eq!(e.key, "hosts.s.count", "{e}");
        assert!(e.message.contains("1..254"), "{e}");
        let e = error_of(&GROUPS.replace(
            r#"{ groups = ["5.01ms", "10ms", "15ms", "25ms"] }"#,
            r#"["1ms", "2ms", "3ms"]"#,
        ));
        assert_eq!(e.key, "hosts.s.access_delay", "{e}");
        assert!(e.message.contains("3 values for 10 members"), "{e}");
        let e = error_of(&GROUPS.replace(r#""10ms", "15ms""#, r#""10ms", "fast""#));
        assert_eq!(e.key, "hosts.s.access_delay.groups[2]", "{e}");
        let e = error_of(&GROUPS.replace(
            "[hosts.r]\nside = \"mobile\"\ncount = 10",
            "[hosts.r]\nside = \"mobile\"\ncount = 9",
        ));
        assert_eq!(e.key, "flows[0].to", "{e}");
        assert!(
            e.message.contains("9 members") && e.message.contains("as many"),
            "{e}"
        );
        // A list for a single host.
        let e = error_of(&BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naccess_delay = [\"1ms\"]",
        ));
        assert_eq!(e.key, "hosts.mobile.access_delay", "{e}");
        assert!(e.message.contains("host group"), "{e}");
        // A member name taken by another host.
        let e = error_of(&format!("{GROUPS}[hosts.s3]\nside = \"fixed\"\n"));
        assert!(e.message.contains("\"s3\" is defined twice"), "{e}");
        // A start per member past the run's end names the member.
        let e = error_of(&GROUPS.replace(r#""250ms""#, r#""10s""#));
        assert_eq!(e.key, "flows[0].start", "{e}");
        assert!(e.message.contains("member 5"), "{e}");
    }

    #[test]
    fn link_set_puts_values_over_the_link_spec() {
        let d = dir_with_link();
        let text = BASE.replace(
            "link = \"l.toml\"",
            "link = \"l.toml\"\nlink_set = { down = { rate = \"128kbit\", queue = { packets = 7 } } }",
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let (down, up) = (
            &s.link.dirs[Dir::Down.index()],
            &s.link.dirs[Dir::Up.index()],
        );
        assert_eq!(down.per_state[0].base_rate, Rate(128_000));
        assert_eq!(
            up.per_state[0].base_rate,
            Rate(64_000),
            "the file's rate stays up"
        );
        assert_eq!(down.per_state[0].delay, Dur::from_millis(300));
        assert_eq!(down.queue.packets, Some(7));
        assert_eq!(s.link.mtu, Some(576));
        // A bad value names the link and link_set.
        let e = error_of(&BASE.replace(
            "link = \"l.toml\"",
            "link = \"l.toml\"\nlink_set = { down = { rate = \"0kbit\" } }",
        ));
        assert_eq!(e.key, "link", "{e}");
        assert!(
            e.message.contains("with link_set") && e.message.contains("rate"),
            "{e}"
        );
    }
}
