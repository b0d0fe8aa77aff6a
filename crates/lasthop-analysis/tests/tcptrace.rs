//! The analyser against the real tcptrace (Debian's 6.6.7) on the same captures: the hand-built
//! connection and a few hundred random ones (random segments, overlaps, retransmissions,
//! reordering, duplicate and SACK-carrying ACKs).
//!
//! tcptrace must be installed (`scripts/compare-tcptrace.sh` installs it); if it is missing the
//! test tries that script and then fails with the reason. Set `LASTHOP_SKIP_TCPTRACE=1` to skip
//! it on purpose (it says so on stderr).

mod common;

use common::*;
use lasthop_analysis::{self as la, ConnStats, DirStats};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn find_tcptrace() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("tcptrace"))
        .find(|p| p.is_file())
}

/// The tcptrace binary, installing it through the script if needed (once per test binary: the
/// tests run in parallel and apt allows one installer at a time); `None` only when skipping was
/// asked for.
fn tcptrace() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Result<Option<PathBuf>, String>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(locate_or_install)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn locate_or_install() -> Result<Option<PathBuf>, String> {
    if std::env::var_os("LASTHOP_SKIP_TCPTRACE").is_some() {
        eprintln!("LASTHOP_SKIP_TCPTRACE is set: the tcptrace comparison is SKIPPED");
        return Ok(None);
    }
    if let Some(p) = find_tcptrace() {
        return Ok(Some(p));
    }
    let script = repo_root().join("scripts/compare-tcptrace.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("--install-only")
        .output()
        .map_err(|e| {
            format!(
                "tcptrace is not installed and {} could not run: {e}",
                script.display()
            )
        })?;
    match find_tcptrace() {
        Some(p) => Ok(Some(p)),
        None => Err(format!(
            "tcptrace is not installed and could not be installed by {} (exit {:?}):\n{}\n{}\n\
             Install it (`apt-get install tcptrace`) or set LASTHOP_SKIP_TCPTRACE=1 to skip.",
            script.display(),
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// tcptrace's per-direction numbers: connection "a:port-b:port" → (a→b, b→a) label → value.
type Dir = HashMap<String, String>;

fn run_tcptrace(bin: &Path, pcap: &Path) -> HashMap<(String, String), (Dir, Dir)> {
    let out = Command::new(bin)
        .args(["-l", "-r", "-n"])
        .arg(pcap)
        .output()
        .expect("run tcptrace");
    assert!(out.status.success(), "tcptrace failed: {:?}", out);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut res = HashMap::new();
    let mut cur: Option<((String, String), Dir, Dir)> = None;
    let mut a = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("TCP connection ") && t.ends_with(':') {
            if let Some((k, x, y)) = cur.take() {
                res.insert(k, (x, y));
            }
            continue;
        }
        // "host a:", "host b:", then "host c:", "host d:" ... for later connections
        if let Some(rest) = t.strip_prefix("host ") {
            if let Some((_, v)) = rest.split_once(':') {
                if a.is_empty() {
                    a = v.trim().to_string();
                } else {
                    cur = Some((
                        (std::mem::take(&mut a), v.trim().to_string()),
                        Dir::new(),
                        Dir::new(),
                    ));
                }
                continue;
            }
        }
        let Some((_, x, y)) = cur.as_mut() else {
            continue;
        };
        let toks: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let mut pairs = Vec::new();
        let mut i = 0;
        while i + 1 < toks.len() {
            if toks[i].ends_with(':') {
                pairs.push((
                    toks[i].trim_end_matches(':').to_string(),
                    toks[i + 1].to_string(),
                ));
                i += 2;
            } else {
                i += 1;
            }
        }
        if pairs.len() == 2 {
            x.insert(pairs[0].0.clone(), pairs[0].1.clone());
            y.insert(pairs[1].0.clone(), pairs[1].1.clone());
        }
    }
    if let Some((k, x, y)) = cur.take() {
        res.insert(k, (x, y));
    }
    res
}

fn num(d: &Dir, label: &str) -> u64 {
    let v = d
        .get(label)
        .unwrap_or_else(|| panic!("tcptrace printed no `{label}`: {d:?}"));
    v.split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{label}: {v}"))
}

/// Compares the analyser's direction with tcptrace's; returns the differences.
fn compare_dir(ours: &DirStats, theirs: &Dir, what: &str) -> Vec<String> {
    let mut diffs = Vec::new();
    let mut check = |label: &str, v: u64| {
        let t = num(theirs, label);
        if t != v {
            diffs.push(format!("{what} {label}: ours {v}, tcptrace {t}"));
        }
    };
    check("actual data pkts", ours.data_pkts);
    check("actual data bytes", ours.data_bytes);
    check("rexmt data pkts", ours.rexmt_pkts);
    check("rexmt data bytes", ours.rexmt_bytes);
    check("unique bytes sent", ours.unique_bytes);
    check("outoforder pkts", ours.out_of_order);
    check("zwnd probe pkts", ours.zwnd_probes);
    check("duplicate acks", ours.dupacks);
    check("triple dupacks", ours.triple_dupacks);
    check("sack pkts sent", ours.sack_pkts);
    check("total packets", ours.packets);
    check("pure acks sent", ours.pure_acks);
    check("RTT samples", ours.rtt.samples);
    if ours.rtt.samples > 0 {
        // tcptrace prints milliseconds with one decimal
        let ms = |label: &str| -> f64 {
            theirs[label]
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        for (label, v) in [
            ("RTT min", ours.rtt.min_ns as f64 / 1e6),
            ("RTT max", ours.rtt.max_ns as f64 / 1e6),
            ("RTT avg", ours.rtt.avg_ns().unwrap() / 1e6),
        ] {
            if (ms(label) - v).abs() > 0.051 {
                diffs.push(format!(
                    "{what} {label}: ours {v:.3} ms, tcptrace {} ms",
                    ms(label)
                ));
            }
        }
    }
    diffs
}

fn compare(bin: &Path, segs: &[Seg], conns: &[ConnStats], dir: &Path, name: &str) {
    // tcptrace misreads nanosecond timestamps, so it gets a microsecond copy; the analyser reads
    // both and must agree with itself.
    let usec = match std::env::var_os("LASTHOP_KEEP_PCAPS") {
        Some(d) => PathBuf::from(d).join(format!("{name}-usec.pcap")),
        None => dir.join(format!("{name}-usec.pcap")),
    };
    // the simulator's kind of capture (ns, header-only), converted for tcptrace
    let ns_bytes = pcap_bytes(segs, Format::SimHeaderOnly);
    let f = std::fs::File::create(&usec).unwrap();
    la::write_usec_copy(&ns_bytes[..], "sim", std::io::BufWriter::new(f)).unwrap();
    let nsec = la::analyze_reader(&ns_bytes[..]).unwrap();
    assert_eq!(nsec.len(), conns.len());
    for (a, b) in nsec.iter().zip(conns) {
        assert_eq!(a.c2s.rexmt_pkts, b.c2s.rexmt_pkts);
        assert_eq!(a.s2c, {
            let mut s = b.s2c.clone();
            s.first = a.s2c.first;
            s.last = a.s2c.last;
            s.partial_acked = a.s2c.partial_acked;
            s.first_data = a.s2c.first_data;
            s
        });
    }
    let theirs = run_tcptrace(bin, &usec);
    assert_eq!(theirs.len(), conns.len(), "{name}: connection count");
    let mut diffs = Vec::new();
    for c in conns {
        let key = (c.client.to_string(), c.server.to_string());
        let (ab, ba) = theirs
            .get(&key)
            .unwrap_or_else(|| panic!("{name}: tcptrace has no connection {key:?}"));
        diffs.extend(compare_dir(
            &c.c2s,
            ab,
            &format!("{name} conn {} c2s", c.id),
        ));
        diffs.extend(compare_dir(
            &c.s2c,
            ba,
            &format!("{name} conn {} s2c", c.id),
        ));
    }
    assert!(
        diffs.is_empty(),
        "differences from tcptrace:\n{}",
        diffs.join("\n")
    );
}

/// A small deterministic generator (xorshift), so the random connections are the same on every
/// run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// One random connection on client port `port`, starting at `t0` ms.
fn random_conn(rng: &mut Rng, port: u16, t0: u64) -> Vec<Seg> {
    let (c, s) = (true, false);
    let cisn = 0x1000_0000 + rng.below(0x1000_0000) as u32;
    let sisn = 0x1000_0000 + rng.below(0x1000_0000) as u32;
    let mut t = t0;
    let mut out = Vec::new();
    let handshake = rng.chance(85);
    if handshake {
        let ws = rng.chance(30).then(|| rng.below(8) as u8);
        let with_ws = |sg: Seg| match ws {
            Some(w) => sg.wscale(w),
            None => sg,
        };
        out.push(with_ws(seg(t, c, cisn).syn().ports(port, 80)));
        if rng.chance(10) {
            // a retransmitted SYN
            t += 1000;
            out.push(with_ws(seg(t, c, cisn).syn().ports(port, 80)));
        }
        t += 1 + rng.below(50);
        out.push(with_ws(seg(t, s, sisn).syn().ack(cisn + 1).ports(port, 80)));
        t += 1 + rng.below(50);
        out.push(seg(t, c, cisn + 1).ack(sisn + 1).ports(port, 80));
    }
    // per side: starts of segments sent, highest end sent, ACKs sent
    let mut sent: [Vec<(u32, u32)>; 2] = [vec![], vec![]];
    let mut top = [cisn + 1, sisn + 1];
    let isn = [cisn + 1, sisn + 1];
    let mut last_ack = [sisn + 1, cisn + 1];
    let n = 20 + rng.below(120);
    for _ in 0..n {
        t += rng.below(40);
        let from_client = rng.chance(40);
        let me = usize::from(!from_client);
        let peer = 1 - me;
        let mut sg = if rng.chance(55) {
            // data
            let (seq, len) = if !sent[me].is_empty() && rng.chance(30) {
                // resend an earlier segment, maybe shorter or longer
                let (s0, l0) = sent[me][rng.below(sent[me].len() as u64) as usize];
                let len = match rng.below(4) {
                    0 => l0 / 2 + 1,
                    1 => l0 + 1 + rng.below(200) as u32,
                    _ => l0,
                };
                (s0, len)
            } else if rng.chance(15) && top[me] > isn[me] {
                // somewhere in what was sent
                let span = top[me] - isn[me];
                (
                    isn[me] + rng.below(u64::from(span)) as u32,
                    1 + rng.below(300) as u32,
                )
            } else if rng.chance(10) {
                // a hole: skip ahead
                (
                    top[me] + 1 + rng.below(500) as u32,
                    1 + rng.below(536) as u32,
                )
            } else {
                (top[me], 1 + rng.below(536) as u32)
            };
            sent[me].push((seq, len));
            top[me] = top[me].max(seq + len);
            seg(t, from_client, seq).len(len as usize)
        } else {
            // a pure ACK (or a data-less segment)
            seg(t, from_client, top[me])
        };
        // the ACK field: repeat the last one (dupacks), or advance within what the peer sent
        let ack = if rng.chance(45) || top[peer] <= last_ack[me] {
            last_ack[me]
        } else {
            last_ack[me] + rng.below(u64::from(top[peer] - last_ack[me]) + 1) as u32
        };
        last_ack[me] = ack;
        if handshake || rng.chance(95) {
            sg = sg.ack(ack);
        }
        if rng.chance(15) && top[peer] > ack + 10 {
            let l = ack + 1 + rng.below(u64::from(top[peer] - ack - 5)) as u32;
            let r = l + 1 + rng.below(u64::from(top[peer] - l)) as u32;
            let mut blocks = vec![(l, r)];
            if rng.chance(30) {
                blocks.push((ack.saturating_sub(100), ack));
                blocks.swap(0, 1);
            }
            sg = sg.sack(&blocks);
        }
        if rng.chance(2) {
            sg = sg.rst();
        }
        if rng.chance(3) {
            sg = sg.window(0);
        } else if rng.chance(20) {
            sg = sg.window(1000 + rng.below(60000) as u16);
        }
        out.push(sg.ports(port, 80));
    }
    if rng.chance(70) {
        t += 1;
        out.push(seg(t, s, top[1]).ack(last_ack[1]).fin().ports(port, 80));
        t += 10;
        out.push(seg(t, c, top[0]).ack(top[1] + 1).fin().ports(port, 80));
        t += 10;
        out.push(seg(t, s, top[1] + 1).ack(top[0] + 1).ports(port, 80));
        if rng.chance(30) {
            // a retransmitted FIN
            out.push(
                seg(t + 500, c, top[0])
                    .ack(top[1] + 1)
                    .fin()
                    .ports(port, 80),
            );
        }
    }
    out
}

#[test]
fn hand_capture_matches_tcptrace() {
    let Some(bin) = tcptrace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let segs = hand_script();
    let conns = la::analyze_reader(&pcap_bytes(&segs, Format::RawMicro)[..]).unwrap();
    compare(&bin, &segs, &conns, dir.path(), "hand");
}

#[test]
fn random_connections_match_tcptrace() {
    let Some(bin) = tcptrace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let batches: u64 = std::env::var("LASTHOP_TCPTRACE_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    for batch in 0..batches {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (batch + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut segs = Vec::new();
        for k in 0..50u16 {
            segs.extend(random_conn(&mut rng, 10_000 + k, u64::from(k) * 100_000));
        }
        let conns = la::analyze_reader(&pcap_bytes(&segs, Format::RawMicro)[..]).unwrap();
        assert_eq!(conns.len(), 50);
        compare(&bin, &segs, &conns, dir.path(), &format!("random{batch}"));
    }
}
