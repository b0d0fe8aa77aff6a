//! FQ-CoDel (RFC 8290): the router queue split into `flows` queues by a hash of the 5-tuple,
//! served by deficit round robin with a quantum, new flows before old ones, and CoDel on each
//! flow queue at dequeue.
//!
//! ```text
//! enqueue:  i <- hash(5-tuple) mod flows; append; if flow i is in no list: add it to the tail
//!           of new_flows with deficit = quantum.  Over the queue's limit: drop from the head of
//!           the flow with the largest backlog (§4.1)
//! dequeue:  f <- head of new_flows, else of old_flows, else nothing
//!           deficit(f) <= 0:  deficit += quantum, move f to the tail of old_flows, again
//!           CoDel-dequeue from f; f empty: a new flow moves to old_flows' tail if old_flows is
//!           not empty (so it cannot starve them), else it leaves the lists; again
//!           deficit(f) -= the packet's length                                          (§4.2)
//! ```
//!
//! Where RFC 8290 leaves choices this follows Linux `sch_fq_codel.c`: the hash is reduced with
//! `(hash × flows) >> 32` (`reciprocal_scale`) and perturbed by a random value, here drawn once
//! from the stream `link.fq_codel.{dir}`; at the limit half the fattest flow's backlog is
//! dropped, at most `drop_batch` (64) packets, and that flow's CoDel count grows by the number
//! dropped; CoDel's "backlog <= MTU" test uses the whole queue's backlog; ECN is on by default.
//! The limit is the router queue's `packets` / `bytes` (Linux: 10240 packets, 32 MB).

use crate::event::Cause;
use crate::queue::codel::CodelVars;
use crate::queue::discipline::{Queued, Verdict};
use crate::spec::queue::fq_codel::FqCodelConfig;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, FlowKey, Time};
use std::collections::VecDeque;
use std::net::IpAddr;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum List {
    New,
    Old,
}

struct Flow {
    q: VecDeque<Queued>,
    backlog: u64,
    deficit: i64,
    vars: CodelVars,
    list: Option<List>,
}

/// FQ-CoDel's flow queues and scheduler.
pub struct FqCodel {
    cfg: FqCodelConfig,
    quantum: i64,
    mtu: u64,
    perturbation: u64,
    flows: Vec<Flow>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    len: usize,
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    /// The flow of the packet last enqueued, of the head [`FqCodel::head`] chose (kept until
    /// it is popped, as Linux keeps a dequeued packet the device could not take), and of the
    /// packet last popped.
    last: usize,
    selected: Option<usize>,
    popped: usize,
}

impl FqCodel {
    /// `mtu`: the link MTU, the default quantum and CoDel's backlog threshold.
    pub fn new(mut cfg: FqCodelConfig, mtu: u64, mut rng: Stream) -> FqCodel {
        // The spec refuses 0 flows and a 0 quantum; a config built by hand must not panic.
        cfg.flows = cfg.flows.max(1);
        cfg.quantum = cfg.quantum.map(|q| q.max(1));
        cfg.drop_batch = cfg.drop_batch.max(1);
        let flows = (0..cfg.flows)
            .map(|_| Flow {
                q: VecDeque::new(),
                backlog: 0,
                deficit: 0,
                vars: CodelVars::default(),
                list: None,
            })
            .collect();
        FqCodel {
            quantum: cfg.quantum.unwrap_or(mtu).clamp(1, i64::MAX as u64) as i64,
            cfg,
            mtu,
            perturbation: (unit(&mut rng) * (1u64 << 53) as f64) as u64,
            flows,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            limit_pkts: None,
            limit_bytes: None,
            last: 0,
            selected: None,
            popped: 0,
        }
    }

    /// The router queue's limits, which FQ-CoDel enforces by dropping from the fattest flow.
    pub fn set_limits(&mut self, packets: Option<u64>, bytes: Option<u64>) {
        self.limit_pkts = packets;
        self.limit_bytes = bytes;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn quantum(&self) -> i64 {
        self.quantum
    }

    /// The flow queue a 5-tuple maps to.
    pub fn flow_index(&self, k: &FlowKey) -> usize {
        // FNV-1a over the 5-tuple, seeded with the perturbation; the top 32 bits are the hash.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.perturbation;
        let mut eat = |b: &[u8]| {
            for &x in b {
                h ^= u64::from(x);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(&[k.proto]);
        for a in [k.src, k.dst] {
            match a {
                IpAddr::V4(v) => eat(&v.octets()),
                IpAddr::V6(v) => eat(&v.octets()),
            }
        }
        eat(&k.sport.to_be_bytes());
        eat(&k.dport.to_be_bytes());
        let h32 = (h ^ (h >> 32)) & 0xffff_ffff;
        ((h32 * u64::from(self.cfg.flows)) >> 32) as usize
    }

    /// The backlog of the flow queue `k` maps to, in bytes.
    pub fn backlog_of(&self, k: &FlowKey) -> u64 {
        self.flows[self.flow_index(k)].backlog
    }

    pub(crate) fn enqueue(&mut self, q: Queued) {
        let i = self.flow_index(&q.pkt.flow);
        let f = &mut self.flows[i];
        f.backlog += u64::from(q.pkt.wire_len);
        f.q.push_back(q);
        if f.list.is_none() {
            f.list = Some(List::New);
            f.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        self.len += 1;
        self.last = i;
    }

    pub(crate) fn last(&self) -> Option<&Queued> {
        self.flows[self.last].q.back()
    }

    /// Whether the queue holds more than its limits allow, with `bytes` in it.
    pub fn over_limit(&self, bytes: u64) -> bool {
        self.limit_pkts.is_some_and(|n| self.len as u64 > n)
            || self.limit_bytes.is_some_and(|b| bytes > b)
    }

    /// The packet the scheduler sends next (RFC 8290 §4.2), choosing its flow: flows whose
    /// deficit is spent get a quantum and go to the old list's tail, empty ones leave.
    pub(crate) fn head(&mut self) -> Option<&Queued> {
        if let Some(i) = self.selected.filter(|&i| !self.flows[i].q.is_empty()) {
            return self.flows[i].q.front();
        }
        loop {
            let (new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => {
                    self.selected = None;
                    return None;
                }
            };
            let f = &mut self.flows[i];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                f.list = Some(List::Old);
                self.pop_list(new);
                self.old_flows.push_back(i);
                continue;
            }
            if f.q.is_empty() {
                // CoDel found the flow's queue empty: it leaves its drop state.
                f.vars.on_empty();
                self.pop_list(new);
                if new && !self.old_flows.is_empty() {
                    self.flows[i].list = Some(List::Old);
                    self.old_flows.push_back(i);
                } else {
                    self.flows[i].list = None;
                }
                continue;
            }
            self.selected = Some(i);
            return self.flows[i].q.front();
        }
    }

    fn pop_list(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Removes the head [`FqCodel::head`] chose.
    pub(crate) fn pop(&mut self) -> Queued {
        let i = self.selected.take().expect("head chosen before pop");
        self.popped = i;
        let f = &mut self.flows[i];
        let q = f.q.pop_front().expect("the chosen flow has a packet");
        f.backlog -= u64::from(q.pkt.wire_len);
        self.len -= 1;
        q
    }

    /// CoDel's verdict on `q`, just popped from its flow, with `backlog` bytes left in the
    /// whole queue; a packet sent on spends its length of the flow's deficit.
    pub(crate) fn on_dequeue(
        &mut self,
        now: Time,
        q: &Queued,
        sojourn: Dur,
        backlog: u64,
    ) -> Verdict {
        let f = &mut self.flows[self.popped];
        let v = f.vars.on_dequeue(
            &self.cfg.codel,
            self.mtu,
            now,
            sojourn,
            backlog,
            q.pkt.ecn().is_ect(),
        );
        if !matches!(v, Verdict::Drop(_)) {
            f.deficit -= i64::from(q.pkt.wire_len);
        }
        debug_assert!(!matches!(v, Verdict::Drop(c) if c != Cause::Codel));
        v
    }

    /// Drops from the head of the flow with the largest backlog (the first such flow) until half
    /// its backlog is gone or `drop_batch` packets are (Linux `fq_codel_drop`).
    pub(crate) fn drop_fattest(&mut self) -> Vec<Queued> {
        let mut fat = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max {
                max = f.backlog;
                fat = i;
            }
        }
        let threshold = max / 2;
        let f = &mut self.flows[fat];
        let mut dropped = Vec::new();
        let mut bytes = 0;
        while let Some(q) = f.q.pop_front() {
            bytes += u64::from(q.pkt.wire_len);
            dropped.push(q);
            if dropped.len() as u32 >= self.cfg.drop_batch || bytes >= threshold {
                break;
            }
        }
        f.backlog -= bytes;
        // Linux: "tell codel to increase its signal strength also".
        f.vars.count = f.vars.count.saturating_add(dropped.len() as u32);
        self.len -= dropped.len();
        dropped
    }
}
