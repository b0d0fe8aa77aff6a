//! Stage 2, the link send buffer (LSB): packets moved from the head of the router queue while
//! they fit, waiting for the serializer. With link-layer ACK emulation a packet keeps its space
//! until it leaves the link receive buffer, or until `link_ack_delay` after that (the model's
//! `LsbFree` timer). Without a size (`lsb` not given) the LSB holds one packet, the one being
//! sent (or about to be), and frees it when its last bit is sent: the router queue then holds
//! every other packet, as a qdisc holds them above a device that takes one at a time.

use crate::queue::discipline::Queued;
use crate::spec::config::DirConfig;
use crate::spec::limits::MAX_QUEUE_PACKETS;
use crate::spec::schema::LsbAdmit;
use std::collections::VecDeque;

pub(crate) struct SendBuffer {
    /// Packets not yet transmitted.
    pub wait: VecDeque<Queued>,
    /// Occupancy: waiting packets, plus (with link-layer ACK emulation) packets sent and not yet
    /// released from the LRB.
    pub bytes: u64,
    cap: Option<u64>,
    admit: LsbAdmit,
    /// Link-layer ACK emulation: space is freed at release, not at the end of transmission.
    pub link_ack: bool,
}

impl SendBuffer {
    #[inline]
    pub fn new(dc: &DirConfig) -> SendBuffer {
        SendBuffer {
            wait: VecDeque::new(),
            bytes: 0,
            cap: dc.lsb,
            admit: dc.lsb_admit,
            link_ack: dc.link_ack,
        }
    }

    /// Whether a packet of `len` bytes may enter (never past [`MAX_QUEUE_PACKETS`] waiting,
    /// whatever the size: an unlimited buffer would take all the router queue holds).
    #[inline]
    pub fn fits(&self, len: u64) -> bool {
        (self.wait.len() as u64) < MAX_QUEUE_PACKETS
            && match self.cap {
                // No size given: one packet at a time (the spec refuses link-layer ACK emulation
                // here, so the packet leaves when its transmission ends).
                None => self.bytes == 0,
                Some(cap) => match self.admit {
                    LsbAdmit::Fits => self.bytes + len <= cap,
                    LsbAdmit::Below => self.bytes < cap,
                },
            }
    }

    #[inline]
    pub fn push(&mut self, q: Queued) {
        self.bytes += u64::from(q.pkt.wire_len);
        self.wait.push_back(q);
    }

    /// The end of a transmission of `len` bytes.
    #[inline]
    pub fn sent(&mut self, len: u64) {
        if !self.link_ack {
            self.bytes -= len;
        }
    }

    /// A sent packet of `len` bytes left the link (released or dropped).
    #[inline]
    pub fn left_link(&mut self, len: u64) {
        if self.link_ack {
            self.bytes -= len;
        }
    }
}
