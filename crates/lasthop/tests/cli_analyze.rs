//! `lasthop analyze` through the command line: two captures of one run in either order give the
//! same answer, and `--csv` follows the rule for output paths.

use std::path::Path;
use std::process::{Command, Output};

fn lasthop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

/// A simulated run of the shipped seed 000 e0 scenario: the fixed host is the TCP client and
/// sends, the mobile host receives.
fn run(dir: &Path) -> (String, String) {
    let sc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/seed000-e0.toml");
    let out = dir.join("run");
    let o = lasthop(&["sim", sc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    (
        out.join("fixed.pcap").display().to_string(),
        out.join("mobile.pcap").display().to_string(),
    )
}

#[test]
fn two_captures_in_either_order_give_the_same_table() {
    let d = tempfile::tempdir().unwrap();
    let (fixed, mobile) = run(d.path());
    let (a, b) = (d.path().join("a.csv"), d.path().join("b.csv"));
    let right = lasthop(&["analyze", &fixed, &mobile, "--csv", a.to_str().unwrap()]);
    assert!(right.status.success(), "{}", text(&right));
    assert!(
        !text(&right).contains("note:") && !text(&right).contains("warning"),
        "{}",
        text(&right)
    );
    let swapped = lasthop(&["analyze", &mobile, &fixed, "--csv", b.to_str().unwrap()]);
    assert!(swapped.status.success(), "{}", text(&swapped));
    assert!(
        text(&swapped).contains(&format!("note: {fixed} is the TCP client's capture")),
        "{}",
        text(&swapped)
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap()
    );
    assert_eq!(right.stdout, swapped.stdout);
    // The merged row: the client's elapsed time, the sender's counts; the transfer is whole.
    let csv = std::fs::read_to_string(&a).unwrap();
    assert!(csv.lines().nth(1).unwrap().contains(",188640,"), "{csv}");
}

#[test]
fn csv_output_paths_follow_the_rule() {
    let d = tempfile::tempdir().unwrap();
    let (fixed, _) = run(d.path());
    // A directory is refused, with what is allowed.
    let o = lasthop(&["analyze", &fixed, "--csv", d.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("is a directory") && text(&o).contains("`-` for standard output"),
        "{}",
        text(&o)
    );
    // `-` is standard output: the table, then the CSV.
    let o = lasthop(&["analyze", &fixed, "--csv", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\nconn,client,server,"),
        "{}",
        text(&o)
    );
    // A symlink stays a symlink; its target gets the CSV.
    let target = d.path().join("target.csv");
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = lasthop(&[
        "analyze",
        &fixed,
        "--csv",
        link.to_str().unwrap(),
        "--usec-copy",
        "/dev/null",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&target)
        .unwrap()
        .starts_with("conn,client,server,"));
    // /dev/null took the copy and is still a character device.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}
