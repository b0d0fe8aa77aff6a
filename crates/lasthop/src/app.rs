//! `lasthop app ...`: the workload programs the emulator starts inside the host namespaces. They
//! also run by hand: `ip netns exec NS lasthop app bulk-recv --listen 198.19.0.1:5000`.

use anyhow::Result;
use lasthop_emu::app::{bulk_recv, bulk_send, AppCommon};
use lasthop_scenario::SocketOptions;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub enum AppCommand {
    /// Connect, send N bytes of a checked pattern, close; log connect / first / last byte / close.
    BulkSend {
        /// The receiver's address and port.
        #[arg(long)]
        to: SocketAddr,
        /// How many bytes to send.
        #[arg(long)]
        bytes: u64,
        /// Start this many ns after the epoch (default: at once).
        #[arg(long)]
        start_at: Option<u64>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Listen, accept one connection, read and check everything until the sender closes.
    BulkRecv {
        /// The address and port to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// Fail unless exactly this many bytes arrive.
        #[arg(long)]
        expect: Option<u64>,
        #[command(flatten)]
        common: CommonArgs,
    },
}

#[derive(clap::Args, Debug)]
pub struct CommonArgs {
    /// TCP congestion control module (TCP_CONGESTION), e.g. reno.
    #[arg(long)]
    congestion_control: Option<String>,
    /// TCP_WINDOW_CLAMP in bytes.
    #[arg(long)]
    window_clamp: Option<u64>,
    /// SO_SNDBUF in bytes.
    #[arg(long)]
    sndbuf: Option<u64>,
    /// SO_RCVBUF in bytes.
    #[arg(long)]
    rcvbuf: Option<u64>,
    /// TCP_NODELAY (no Nagle).
    #[arg(long)]
    nodelay: bool,
    /// CSV file of application timestamps (time_ns,event,bytes), written at exit.
    #[arg(long)]
    log: Option<PathBuf>,
    /// CLOCK_MONOTONIC ns that is time 0 of the log (the emulator passes its run start).
    #[arg(long)]
    epoch: Option<u64>,
}

impl CommonArgs {
    fn into_common(self) -> AppCommon {
        AppCommon {
            socket: SocketOptions {
                congestion_control: self.congestion_control,
                window_clamp: self.window_clamp,
                sndbuf: self.sndbuf,
                rcvbuf: self.rcvbuf,
                nodelay: self.nodelay.then_some(true),
            },
            log: self.log,
            epoch: self.epoch,
        }
    }
}

pub fn run(cmd: AppCommand) -> Result<()> {
    match cmd {
        AppCommand::BulkSend {
            to,
            bytes,
            start_at,
            common,
        } => bulk_send(to, bytes, start_at, &common.into_common()),
        AppCommand::BulkRecv {
            listen,
            expect,
            common,
        } => bulk_recv(listen, expect, &common.into_common()),
    }
}
