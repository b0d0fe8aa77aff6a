//! `lasthop app ...`: the workload programs the emulator starts inside the host namespaces. They
//! also run by hand: `ip netns exec NS lasthop app bulk-recv --listen 198.19.0.1:5000`.

use anyhow::Result;
use lasthop_emu::app::{
    bulk_recv, bulk_send, cbr_recv, cbr_send, http_client, http_server, ping_recv, ping_send,
    repeat_recv, repeat_send, thin_send, AppCommon, HttpClientArgs, ThinArgs,
};
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
    /// Send a constant-bit-rate UDP stream: COUNT datagrams of PAYLOAD bytes, one every
    /// INTERVAL ns, each starting with its sequence record.
    CbrSend {
        /// The receiver's address and port.
        #[arg(long)]
        to: SocketAddr,
        /// The local UDP port.
        #[arg(long)]
        from_port: u16,
        /// UDP payload bytes per datagram (at least 16, the record).
        #[arg(long)]
        payload: usize,
        /// Nanoseconds between datagrams.
        #[arg(long)]
        interval: u64,
        /// How many datagrams.
        #[arg(long)]
        count: u64,
        /// Start this many ns after the epoch (default: at once).
        #[arg(long)]
        start_at: Option<u64>,
        #[command(flatten)]
        log: LogArgs,
    },
    /// Receive a UDP stream until UNTIL ns after the epoch.
    CbrRecv {
        /// The address and port to bind.
        #[arg(long)]
        listen: SocketAddr,
        /// Stop receiving this many ns after the epoch.
        #[arg(long)]
        until: u64,
        #[command(flatten)]
        log: LogArgs,
    },
    /// A latency probe over a raw ICMP socket (root): COUNT echo requests of SIZE payload bytes
    /// with identifier IDENT, one every INTERVAL ns, each starting with its probe record; then
    /// waits LINGER ns at most for the last replies.
    PingSend {
        /// The host to ping.
        #[arg(long)]
        to: std::net::Ipv4Addr,
        /// The echoes' identifier (the flow's port).
        #[arg(long)]
        ident: u16,
        /// ICMP payload bytes per probe (at least 16, the record).
        #[arg(long, default_value_t = 56)]
        size: usize,
        /// Nanoseconds between probes.
        #[arg(long)]
        interval: u64,
        /// How many probes.
        #[arg(long)]
        count: u64,
        /// How long to wait for replies after the last probe, ns.
        #[arg(long, default_value_t = 10_000_000_000)]
        linger: u64,
        /// Start this many ns after the epoch (default: at once).
        #[arg(long)]
        start_at: Option<u64>,
        #[command(flatten)]
        log: LogArgs,
    },
    /// The server end of a latency probe: checks that this host answers echo requests, says
    /// `ready` and exits (the kernel answers).
    PingRecv {
        #[command(flatten)]
        log: LogArgs,
    },
    /// Serve HTTP/1.0 `GET /<object>/<size>` requests: answer each with exactly <size> bytes
    /// (headers included) and close.
    HttpServer {
        /// The address and port to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// Exit after serving this many connections (default: serve until stopped).
        #[arg(long)]
        connections: Option<u64>,
        #[command(flatten)]
        log: LogArgs,
    },
    /// Fetch one HTTP/1.0 page: the main object, then the in-line objects once the main
    /// response's first bytes arrive, one connection per object, at most N at once.
    HttpClient {
        /// The server's address and port.
        #[arg(long)]
        to: SocketAddr,
        /// Object sizes in bytes, the main object first (e.g. 6288,2096,2096).
        #[arg(long, value_delimiter = ',', required = true)]
        objects: Vec<u64>,
        /// Connections open at once, the main one included.
        #[arg(long, default_value_t = 4)]
        concurrency: u32,
        /// Request size in bytes (padded with an X-Pad header).
        #[arg(long, default_value_t = 350)]
        request: u64,
        /// The main object's local port; object k is fetched from this port + k.
        #[arg(long)]
        first_port: u16,
        /// Start this many ns after the epoch (default: at once).
        #[arg(long)]
        start_at: Option<u64>,
        #[command(flatten)]
        log: LogArgs,
    },
    /// Repeated short transfers: connect, send BYTES of the checked pattern, close, wait for
    /// the receiver's close, pause PAUSE ns, again on a new connection; at most COUNT, none
    /// starting at or after UNTIL ns after the epoch.
    RepeatSend {
        /// The receiver's address and port.
        #[arg(long)]
        to: SocketAddr,
        /// Bytes per transfer.
        #[arg(long)]
        bytes: u64,
        /// Nanoseconds between one connection's close and the next connect.
        #[arg(long)]
        pause: u64,
        /// At most this many transfers.
        #[arg(long)]
        count: u32,
        /// Start this many ns after the epoch.
        #[arg(long, default_value_t = 0)]
        start_at: u64,
        /// Start no transfer this many ns after the epoch or later.
        #[arg(long)]
        until: u64,
        #[command(flatten)]
        log: LogArgs,
    },
    /// Accept connections until UNTIL ns after the epoch; read and check each to its end and
    /// close it. Also `thin-recv`: the receiver of thin streams is the same sink.
    #[command(visible_alias = "thin-recv")]
    RepeatRecv {
        /// The address and port to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// Stop accepting this many ns after the epoch.
        #[arg(long)]
        until: u64,
        #[command(flatten)]
        log: LogArgs,
    },
    /// Thin streams (seed 003's Streamzero): STREAMS connections with TCP_NODELAY, each writing
    /// a payload drawn from PAYLOAD (mean:stdev bytes) every ITT (mean:stdev ms) for DURATION ns,
    /// started at a random offset below START_SPREAD ns; the draws are the model's for the same
    /// seed, replication and flow. The receiver is thin-recv (repeat-recv's sink).
    ThinSend {
        #[arg(long)]
        to: SocketAddr,
        #[arg(long)]
        streams: u16,
        #[arg(long)]
        payload: String,
        #[arg(long)]
        itt: String,
        /// The largest payload.
        #[arg(long)]
        mss: u32,
        #[arg(long)]
        duration: u64,
        #[arg(long, default_value_t = 0)]
        start_spread: u64,
        #[arg(long, default_value_t = 0)]
        start_at: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 0)]
        replication: u64,
        #[arg(long, default_value_t = 0)]
        flow: usize,
        #[command(flatten)]
        common: CommonArgs,
    },
}

#[derive(clap::Args, Debug)]
pub struct LogArgs {
    /// CSV file of application timestamps (time_ns,event,bytes), written at exit.
    #[arg(long)]
    log: Option<PathBuf>,
    /// CLOCK_MONOTONIC ns that is time 0 of the log (the emulator passes its run start).
    #[arg(long)]
    epoch: Option<u64>,
}

impl LogArgs {
    fn into_common(self) -> AppCommon {
        AppCommon {
            log: self.log,
            epoch: self.epoch,
            ..AppCommon::default()
        }
    }
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
    /// TCP_THIN_LINEAR_TIMEOUTS: linear retransmission timeouts while the stream is thin.
    #[arg(long)]
    thin_linear_timeouts: bool,
    /// TCP_THIN_DUPACK: fast retransmit on the first duplicate ACK while thin (ignored by
    /// Linux 4.13 and later).
    #[arg(long)]
    thin_dupack: bool,
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
                thin_linear_timeouts: self.thin_linear_timeouts.then_some(true),
                thin_dupack: self.thin_dupack.then_some(true),
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
        AppCommand::CbrSend {
            to,
            from_port,
            payload,
            interval,
            count,
            start_at,
            log,
        } => cbr_send(
            to,
            from_port,
            payload,
            interval,
            count,
            start_at,
            &log.into_common(),
        ),
        AppCommand::CbrRecv { listen, until, log } => cbr_recv(listen, until, &log.into_common()),
        AppCommand::PingSend {
            to,
            ident,
            size,
            interval,
            count,
            linger,
            start_at,
            log,
        } => ping_send(
            to,
            ident,
            size,
            interval,
            count,
            linger,
            start_at,
            &log.into_common(),
        ),
        AppCommand::PingRecv { log } => ping_recv(&log.into_common()),
        AppCommand::HttpServer {
            listen,
            connections,
            log,
        } => http_server(listen, connections, &log.into_common()),
        AppCommand::HttpClient {
            to,
            objects,
            concurrency,
            request,
            first_port,
            start_at,
            log,
        } => http_client(
            &HttpClientArgs {
                to,
                objects,
                concurrency,
                request,
                first_port,
                start_at,
            },
            &log.into_common(),
        ),
        AppCommand::RepeatSend {
            to,
            bytes,
            pause,
            count,
            start_at,
            until,
            log,
        } => repeat_send(to, bytes, pause, count, start_at, until, &log.into_common()),
        AppCommand::RepeatRecv { listen, until, log } => {
            repeat_recv(listen, until, &log.into_common())
        }
        AppCommand::ThinSend {
            to,
            streams,
            payload,
            itt,
            mss,
            duration,
            start_spread,
            start_at,
            seed,
            replication,
            flow,
            common,
        } => thin_send(
            &ThinArgs {
                to,
                streams,
                payload,
                itt,
                mss,
                duration_ns: duration,
                start_spread_ns: start_spread,
                start_at,
                seed,
                replication,
                flow,
            },
            &common.into_common(),
        ),
    }
}
