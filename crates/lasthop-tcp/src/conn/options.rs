//! The options the SYN exchange negotiated (SACK, timestamps, ECN, window scaling) and the
//! effective MSS they leave.

use super::*;

/// What both sides agreed on. Before the handshake completes: nothing, and our own MSS.
#[derive(Clone, Copy, Debug)]
pub(super) struct Negotiated {
    pub(super) sack: bool,
    /// RFC 1323 timestamps: 12 bytes of every segment.
    pub(super) ts: bool,
    /// ECN (RFC 3168).
    pub(super) ecn: bool,
    /// Window scaling (RFC 1323): ours for windows we advertise, the peer's for windows we
    /// receive; 0 when not negotiated.
    pub(super) ws: bool,
    pub(super) rcv_wscale: u8,
    pub(super) snd_wscale: u8,
    pub(super) peer_mss: u32,
    /// Effective MSS: payload bytes of a full segment.
    pub(super) mss: u32,
}

impl Negotiated {
    pub(super) fn new(cfg: &TcpConfig) -> Negotiated {
        Negotiated {
            sack: false,
            ts: false,
            ecn: false,
            ws: false,
            rcv_wscale: 0,
            snd_wscale: 0,
            peer_mss: 536,
            mss: cfg.adv_mss(),
        }
    }

    /// Options both sides agreed on, from the peer's SYN or SYN-ACK, and the effective MSS.
    pub(super) fn negotiate(&mut self, cfg: &TcpConfig, seg: &Segment) {
        self.sack = cfg.sack && seg.sack_permitted;
        self.ts = cfg.timestamps && seg.ts.is_some();
        if let (true, Some(ws)) = (cfg.window_scaling, seg.wscale) {
            self.ws = true;
            self.snd_wscale = ws.min(14);
            self.rcv_wscale = our_wscale(cfg);
        }
        // RFC 1122: 536 when the peer sends no MSS option.
        self.peer_mss = seg.mss.map_or(536, u32::from);
        let ts = if self.ts { 12 } else { 0 };
        self.mss = self.peer_mss.min(cfg.adv_mss()).saturating_sub(ts).max(1);
    }
}

/// Linux `tcp_select_initial_window`: the smallest shift that fits the receive buffer.
pub(super) fn our_wscale(cfg: &TcpConfig) -> u8 {
    let mut space = cfg.rcvbuf.0.max(cfg.window_clamp.map_or(0, |c| c.0));
    let mut ws = 0;
    while space > 65535 && ws < 14 {
        space >>= 1;
        ws += 1;
    }
    ws
}
