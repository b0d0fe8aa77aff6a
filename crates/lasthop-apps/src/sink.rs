//! The server end shared by the applications whose client opens many connections (`repeat`,
//! `thin`): it listens for the whole run, reads every connection to its end and closes each when
//! its client does. The flow is finished when the client end is. Its real counterpart is
//! `lasthop app repeat-recv`.

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, Status};
use lasthop_core::Time;

pub struct Sink {
    port: u16,
    delivered: u64,
    first_byte: Option<Time>,
    last_byte: Option<Time>,
}

impl Sink {
    pub fn new(f: &FlowCtx) -> Sink {
        Sink {
            port: f.port,
            delivered: 0,
            first_byte: None,
            last_byte: None,
        }
    }
}

impl Endpoint for Sink {
    fn start(&mut self, _now: Time, net: &mut dyn Net) {
        net.listen(self.port);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Readable(_, n) => {
                self.first_byte.get_or_insert(now);
                self.last_byte = Some(now);
                self.delivered += n;
            }
            SockEvent::PeerClosed(s) => net.close(s),
            _ => {}
        }
    }

    /// Listening never ends the run: the flow is finished when its client is.
    fn status(&self) -> Status {
        Status::Done
    }

    fn report(&self, r: &mut FlowReport) {
        r.first_byte = self.first_byte;
        r.last_byte = self.last_byte;
        r.delivered = self.delivered;
    }
}
