//! The `http` application emulated: `lasthop app http-server` / `http-client` on real sockets in
//! the emulator's namespaces, beside the simulated page. Needs root (CAP_NET_ADMIN); without it
//! the test says why it skips, and fails under `LASTHOP_ROOT_TESTS=1` (`.ci/run`).
//!
//! The emulator runs as a child process under a guard that stops it (SIGTERM: the emulator removes
//! what it made) and runs `lasthop cleanup` when the test ends, also when it fails.

mod common;

use common::EmuRun;
use pcap_file::pcap::PcapReader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lasthop");

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

const SYN: u8 = 0x02;
const FIN: u8 = 0x01;

/// One captured IPv4 TCP packet.
#[derive(Debug, Clone)]
struct Pkt {
    t_ns: u64,
    src: [u8; 4],
    sport: u16,
    dport: u16,
    flags: u8,
    seq: u32,
    ack: u32,
    payload: u32,
}

fn read_pcap(path: &Path) -> Vec<Pkt> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = PcapReader::new(f).unwrap();
    let mut v = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        if d.len() < 40 || d[0] >> 4 != 4 || d[9] != 6 {
            continue;
        }
        let ihl = usize::from(d[0] & 15) * 4;
        let total = usize::from(u16::from_be_bytes([d[2], d[3]]));
        let t = &d[ihl..];
        let be32 = |i: usize| u32::from_be_bytes([t[i], t[i + 1], t[i + 2], t[i + 3]]);
        let doff = usize::from(t[12] >> 4) * 4;
        v.push(Pkt {
            t_ns: p.timestamp.as_nanos() as u64,
            src: [d[12], d[13], d[14], d[15]],
            sport: u16::from_be_bytes([t[0], t[1]]),
            dport: u16::from_be_bytes([t[2], t[3]]),
            flags: t[13],
            seq: be32(4),
            ack: be32(8),
            payload: (total - ihl - doff) as u32,
        });
    }
    v
}

/// One object's connection as the client's capture shows it.
#[derive(Debug, Default)]
struct Conn {
    syn_ns: Option<u64>,
    server_isn: Option<u32>,
    /// Highest server payload byte seen, relative to the first data byte.
    server_bytes: u32,
    server_fin: bool,
    client_fin_seq: Option<u32>,
    /// When the ACK of the client's FIN reached the client.
    fin_acked_ns: Option<u64>,
}

/// The page's connections by client port, at the client host's capture.
fn page(pcap: &Path, client: [u8; 4]) -> BTreeMap<u16, (u16, Conn)> {
    let mut conns: BTreeMap<u16, (u16, Conn)> = BTreeMap::new();
    for p in read_pcap(pcap) {
        if p.src == client {
            let (_, c) = conns.entry(p.sport).or_insert((p.dport, Conn::default()));
            if p.flags & SYN != 0 {
                c.syn_ns.get_or_insert(p.t_ns);
            }
            if p.flags & FIN != 0 {
                c.client_fin_seq = Some(p.seq.wrapping_add(p.payload));
            }
        } else {
            let Some((_, c)) = conns.get_mut(&p.dport) else {
                continue;
            };
            if p.flags & SYN != 0 {
                c.server_isn = Some(p.seq);
                continue;
            }
            if let (Some(isn), true) = (c.server_isn, p.payload > 0) {
                let end = p
                    .seq
                    .wrapping_sub(isn)
                    .wrapping_sub(1)
                    .wrapping_add(p.payload);
                c.server_bytes = c.server_bytes.max(end);
            }
            if p.flags & FIN != 0 {
                c.server_fin = true;
            }
            if let Some(f) = c.client_fin_seq {
                if p.ack == f.wrapping_add(1) {
                    c.fin_acked_ns.get_or_insert(p.t_ns);
                }
            }
        }
    }
    conns
}

/// First SYN to the last ACK of a client FIN, in seconds (the seed's response time).
fn page_time(conns: &BTreeMap<u16, (u16, Conn)>) -> f64 {
    let first = conns.values().filter_map(|c| c.1.syn_ns).min().unwrap();
    let last = conns
        .values()
        .map(|c| c.1.fin_acked_ns.expect("every client FIN acknowledged"))
        .max()
        .unwrap();
    (last - first) as f64 / 1e9
}

#[test]
fn emu_seed002_optimal_s2s_fetches_the_page_as_the_simulator_does() {
    if !common::can_emulate("emu_seed002_optimal_s2s_fetches_the_page_as_the_simulator_does") {
        return;
    }
    let spec = examples().join("scenarios/seed002-optimal-s2s.toml");
    let tmp = tempfile::tempdir().unwrap();
    let (sim, emu) = (tmp.path().join("sim"), tmp.path().join("emu"));
    let o = Command::new(BIN)
        .arg("sim")
        .arg(&spec)
        .arg("--out")
        .arg(&sim)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = EmuRun::start(&spec, &emu, &[]).wait(Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "lasthop emu failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    println!("{stdout}");

    let mobile = [198, 19, 0, 1];
    let conns = page(&emu.join("mobile.pcap"), mobile);
    // One connection per object, object k from client port 1024 + k, each to port 80, each
    // carrying exactly its object (headers included) and closed both ways.
    let sizes = [(1024u16, 6288u32), (1025, 2096), (1026, 2096)];
    assert_eq!(
        conns.keys().copied().collect::<Vec<_>>(),
        sizes.map(|s| s.0).to_vec(),
        "{conns:?}"
    );
    for (port, size) in sizes {
        let (dport, c) = &conns[&port];
        assert_eq!(*dport, 80, "port {port}: {c:?}");
        assert_eq!(c.server_bytes, size, "port {port}: {c:?}");
        assert!(
            c.server_fin && c.fin_acked_ns.is_some(),
            "port {port}: {c:?}"
        );
    }
    // The client program read every object whole and logged the page's end.
    let log = std::fs::read_to_string(emu.join("flow0-send.csv")).unwrap();
    for (k, (port, size)) in sizes.iter().enumerate() {
        assert!(
            log.contains(&format!(",eof,{size},{k},{port}\n")),
            "object {k}:\n{log}"
        );
    }
    assert!(log.contains(",page_end,10480,"), "{log}");
    // The client lingers on each close until its FIN is acknowledged, so its own page time (first
    // connect to page_end) is the response time the capture shows.
    let t = |ev: &str| -> f64 {
        log.lines()
            .find(|l| l.split(',').nth(1) == Some(ev))
            .and_then(|l| l.split(',').next()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{ev} in {log}"))
            / 1e9
    };
    let app_page = t("page_end") - t("connect");
    assert!(
        (app_page - page_time(&conns)).abs() < 0.005,
        "the client's page {app_page:.4} s, the capture's {:.4} s",
        page_time(&conns)
    );
    let srv = std::fs::read_to_string(emu.join("flow0-recv.csv")).unwrap();
    assert_eq!(srv.matches(",written,").count(), 3, "{srv}");

    // The same page simulated: same connections, and a page time within 15 %.
    let sim_conns = page(&sim.join("mobile.pcap"), mobile);
    assert_eq!(sim_conns.len(), 3, "{sim_conns:?}");
    let (t_emu, t_sim) = (page_time(&conns), page_time(&sim_conns));
    println!("page: emulated {t_emu:.3} s, simulated {t_sim:.3} s");
    assert!(
        (t_emu / t_sim - 1.0).abs() <= 0.15,
        "emulated {t_emu:.3} s against simulated {t_sim:.3} s"
    );

    // Nothing of the run is left behind.
    let run_id = stdout.split_whitespace().nth(1).expect("run id");
    let list = String::from_utf8(
        Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(!list.contains(&format!("lh-{run_id}-")), "{list}");
}

/// Three consecutive free TCP ports on the loopback (for the client's ports).
fn free_ports(n: u16) -> u16 {
    (20_000u16..60_000)
        .step_by(97)
        .find(|&b| (b..b + n).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()))
        .expect("free ports")
}

/// The scenario's programs with the server moved to `server` on the loopback and the client's
/// first port to `first`.
fn loopback_programs(server: &str, first: u16) -> [Vec<String>; 2] {
    let sc =
        lasthop_scenario::Scenario::load(examples().join("scenarios/seed002-optimal-s2s.toml"))
            .unwrap();
    let f = &sc.flows[0];
    let tmp = std::env::temp_dir();
    let [mut srv, mut cli] = f.app.programs(
        &f.ctx(&sc),
        0,
        [&tmp.join("unused-r.csv"), &tmp.join("unused-s.csv")],
    );
    for args in [&mut srv, &mut cli] {
        let mut i = 0;
        while i < args.len() {
            match args[i].as_str() {
                "--listen" | "--to" => args[i + 1] = server.to_string(),
                "--first-port" => args[i + 1] = first.to_string(),
                "--log" => {
                    args.drain(i..i + 2);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    [srv, cli]
}

#[test]
fn http_programs_fetch_a_page_over_loopback_with_the_scenarios_arguments() {
    // No root needed: the emulator's command lines, run on 127.0.0.1.
    let tmp = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let first = free_ports(3);
    let [srv, cli] = loopback_programs(&format!("127.0.0.1:{port}"), first);
    assert!(srv.contains(&"--connections".to_string()), "{srv:?}");
    let (slog, clog) = (tmp.path().join("s.csv"), tmp.path().join("c.csv"));
    let mut server = Command::new(BIN)
        .arg("app")
        .args(&srv)
        .arg("--log")
        .arg(&slog)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let o = Command::new(BIN)
        .arg("app")
        .args(&cli)
        .arg("--log")
        .arg(&clog)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{cli:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The server exits by itself after one connection per object.
    let t = Instant::now();
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = server.kill();
            panic!("the server did not exit after the page");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let c = std::fs::read_to_string(&clog).unwrap();
    let s = std::fs::read_to_string(&slog).unwrap();
    assert!(c.starts_with("time_ns,event,bytes,object,port\n"), "{c}");
    for (k, size) in [6288, 2096, 2096].iter().enumerate() {
        let p = first + k as u16;
        assert!(c.contains(&format!(",eof,{size},{k},{p}\n")), "{c}");
        assert!(c.contains(&format!(",fin_acked,{size},{k},{p}\n")), "{c}");
        assert!(c.contains(&format!(",request,350,{k},{p}\n")), "{c}");
        assert!(s.contains(&format!(",written,{size},{k},{p}\n")), "{s}");
        assert!(s.contains(&format!(",request,350,{k},{p}\n")), "{s}");
    }
    assert!(c.contains(",page_end,10480,"), "{c}");
    // The in-lines were requested only after the main response's first bytes arrived.
    let at = |log: &str, ev: &str, k: &str| -> i64 {
        log.lines()
            .find(|l| {
                let f: Vec<&str> = l.split(',').collect();
                f.get(1) == Some(&ev) && f.get(3) == Some(&k)
            })
            .and_then(|l| l.split(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{ev} of object {k} in {log}"))
    };
    for k in ["1", "2"] {
        assert!(at(&c, "connect", k) >= at(&c, "first_byte", "0"), "{c}");
    }
    // The page ends when the last FIN is acknowledged.
    let end: i64 = c
        .lines()
        .find(|l| l.contains(",page_end,"))
        .and_then(|l| l.split(',').next()?.parse().ok())
        .unwrap();
    for k in ["0", "1", "2"] {
        assert!(end >= at(&c, "fin_acked", k), "{c}");
    }
}

#[test]
fn http_client_names_the_object_whose_response_is_short() {
    // A server that answers every request with 100 bytes and closes.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut b = [0u8; 1024];
            let _ = std::io::Read::read(&mut s, &mut b);
            let _ = std::io::Write::write_all(&mut s, &[b'x'; 100]);
        }
    });
    let first = free_ports(2);
    let o = Command::new(BIN)
        .args(["app", "http-client", "--to", &addr.to_string()])
        .args(["--objects", "500,300", "--first-port", &first.to_string()])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("object 0 (500 bytes)") && e.contains("received 100 bytes, expected 500"),
        "{e}"
    );
    // A request size that cannot hold the request line is refused before connecting.
    let o = Command::new(BIN)
        .args(["app", "http-client", "--to", &addr.to_string()])
        .args([
            "--objects",
            "500",
            "--request",
            "10",
            "--first-port",
            &first.to_string(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--request") && e.contains("cannot hold"), "{e}");
}

#[test]
fn http_client_keeps_at_most_concurrency_connections_open() {
    let tmp = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let to = format!("127.0.0.1:{port}");
    let mut server = Command::new(BIN)
        .args(["app", "http-server", "--listen", &to, "--connections", "6"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let first = free_ports(6);
    let log = tmp.path().join("c.csv");
    let o = Command::new(BIN)
        .args(["app", "http-client", "--to", &to, "--concurrency", "2"])
        // The main object is large so that the first inline object's connection (opened at
        // its first byte, by a thread that may start late on a loaded machine) is open before
        // it ends: 300 kB over loopback took 1.5 ms, and a CI run saw the second slot's thread
        // start after that.
        .args(["--objects", "30000000,1000,1,60,61,100000"])
        .args(["--first-port", &first.to_string(), "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(server.wait().unwrap().success());
    let c = std::fs::read_to_string(&log).unwrap();
    // Connections open at once, counted from the log (a close is logged before its slot frees).
    let (mut open, mut most, mut fetched) = (0, 0, 0);
    for l in c.lines().skip(1) {
        match l.split(',').nth(1) {
            Some("connect") => open += 1,
            Some("close") => {
                open -= 1;
                fetched += 1;
            }
            _ => {}
        }
        most = most.max(open);
    }
    assert_eq!((most, fetched), (2, 6), "{c}");
    assert!(c.contains(",page_end,30101122,"), "{c}");
}
