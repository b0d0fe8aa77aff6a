//! The metric catalogue: every metric a summary holds, by scheme, as an enum whose variants
//! carry the key (its name in `metrics.json`, `summary.csv`, `summary.json` and references),
//! the label of the report's tables, the unit and how it is summarised. Code names metrics by
//! their variant, so a misspelt metric is a compile error; a key read from a spec or a results
//! directory is looked up here, so an unknown one is a load error (never a silent NaN).

/// What a metric is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
    BytesPerSecond,
    MbitPerSecond,
    Packets,
    Bytes,
    /// A count of something else (connections, streams, transfers, byte ranges).
    Count,
    /// A fraction or an index (utilisation, Jain's index, σ/μ, a loss rate).
    Ratio,
    Percent,
}

/// How a metric is summarised over a point's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summarised {
    /// One value per run (or per connection, flow, page or object): min, 25 %, median, 75 %,
    /// max and mean of those.
    FiveNumbers,
    /// One value per point, derived from the classes' summaries (all five numbers are it).
    PerPoint,
}

/// A metric's entry in the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricInfo {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: Unit,
    pub summarised: Summarised,
}

/// What every scheme's metric enum offers.
pub trait Metric: Copy + Eq + std::fmt::Debug + 'static {
    /// Every metric of the scheme, in table (and `summary.csv`) order.
    const ALL: &'static [Self];
    fn info(self) -> MetricInfo;
    fn key(self) -> &'static str {
        self.info().key
    }
    fn label(self) -> &'static str {
        self.info().label
    }
    /// The metric of this scheme called `key`, if any.
    fn from_key(key: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.key() == key)
    }
}

macro_rules! catalogue {
    ($(#[$doc:meta])* $name:ident {
        $($var:ident = ($key:literal, $label:literal, $unit:ident, $how:ident),)*
    }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($var,)*
        }

        impl Metric for $name {
            const ALL: &'static [$name] = &[$($name::$var,)*];
            fn info(self) -> MetricInfo {
                match self {
                    $($name::$var => MetricInfo {
                        key: $key,
                        label: $label,
                        unit: Unit::$unit,
                        summarised: Summarised::$how,
                    },)*
                }
            }
        }
    };
}

catalogue! {
    /// The per-connection metrics, summarised for each class of connections (and `all`), in table order.
    ConnMetric {
        ElapsedS = ("elapsed_s", "elapsed time (s)", Seconds, FiveNumbers),
        ThroughputBps = ("throughput_Bps", "throughput (bytes/s)", BytesPerSecond, FiveNumbers),
        RexmtPkts = ("rexmt_pkts", "rexmt data pkts", Packets, FiveNumbers),
        Dupacks = ("dupacks", "duplicate acks", Packets, FiveNumbers),
        TripleDupacks = ("triple_dupacks", "triple dupacks", Packets, FiveNumbers),
        SackPkts = ("sack_pkts", "ACKs with SACK (sacks sent)", Packets, FiveNumbers),
        Rtos = ("rtos", "RTOs", Packets, FiveNumbers),
        SpuriousRtos = ("spurious_rtos", "spurious RTOs", Packets, FiveNumbers),
        DropsQueue = ("drops_queue", "pkts dropped (q)", Packets, FiveNumbers),
        DropsRed = ("drops_red", "pkts dropped (r)", Packets, FiveNumbers),
        DropsAqm = ("drops_aqm", "pkts dropped (CoDel, PIE)", Packets, FiveNumbers),
        EcnMarks = ("ecn_marks", "ECN marks", Packets, FiveNumbers),
        DropsRedMarks = ("drops_red_marks", "RED drops + ECN marks (seed 000's r)", Packets, FiveNumbers),
        DropsError = ("drops_error", "pkts dropped (e)", Packets, FiveNumbers),
        AckDrops = ("ack_drops", "ACK-dir pkts dropped", Packets, FiveNumbers),
        UnneededRexmt = ("unneeded_rexmt", "unnecessary rexmts (rexmt − drops)", Packets, FiveNumbers),
        PartialElapsedS = ("partial_elapsed_s", "first 10 KB: SYN to its ACK (s)", Seconds, FiveNumbers),
        PartialThroughputBps = ("partial_throughput_Bps", "first 10 KB: throughput from the first data segment (bytes/s)", BytesPerSecond, FiveNumbers),
        PartialRexmtPkts = ("partial_rexmt_pkts", "first 10 KB: rexmt data pkts", Packets, FiveNumbers),
    }
}

catalogue! {
    /// The run-level metrics (scheme `run`, class `all`), in table order; seed 001's parallel-connection figures last.
    RunMetric {
        TotalTimeS = ("total_time_s", "total time (s)", Seconds, FiveNumbers),
        Jain = ("jain", "Jain's fairness index", Ratio, FiveNumbers),
        ThroughputCov = ("throughput_cov", "throughput σ/μ", Ratio, FiveNumbers),
        UtilDown = ("util_down", "link utilisation, down", Ratio, FiveNumbers),
        UtilUp = ("util_up", "link utilisation, up", Ratio, FiveNumbers),
        QueueMaxDown = ("queue_max_down", "queue max (pkts), down", Packets, FiveNumbers),
        QueueMeanDown = ("queue_mean_down", "queue mean (pkts), down", Packets, FiveNumbers),
        QueueMedianArrivalDown = ("queue_median_arrival_down", "queue median at arrival (pkts), down", Packets, FiveNumbers),
        QueueMaxUp = ("queue_max_up", "queue max (pkts), up", Packets, FiveNumbers),
        QueueMeanUp = ("queue_mean_up", "queue mean (pkts), up", Packets, FiveNumbers),
        LinkDropsQueueDown = ("link_drops_queue_down", "link drops (q), down", Packets, FiveNumbers),
        LinkDropsRedDown = ("link_drops_red_down", "link drops (r), down", Packets, FiveNumbers),
        LinkDropsAqmDown = ("link_drops_aqm_down", "link drops (CoDel, PIE), down", Packets, FiveNumbers),
        LinkDropsErrorDown = ("link_drops_error_down", "link drops (e), down", Packets, FiveNumbers),
        Jain10kX100 = ("jain10k_x100", "Jain's index ×100 of the first-10 KB throughputs", Ratio, FiveNumbers),
        RxMin = ("rx_min", "retransmissions, connection with the fewest", Packets, FiveNumbers),
        RxMax = ("rx_max", "retransmissions, connection with the most", Packets, FiveNumbers),
        Rx10kMin = ("rx10k_min", "retransmissions before 10 KB, connection with the fewest", Packets, FiveNumbers),
        Rx10kMax = ("rx10k_max", "retransmissions before 10 KB, connection with the most", Packets, FiveNumbers),
    }
}

catalogue! {
    /// The per-UDP-flow metrics (scheme `udp`, one class per flow). Seed 000 lists min / 50 % / max of throughput and of each drop cause, and for the spacing max the lowest and the highest per-replication maximum (min and max here).
    UdpMetric {
        ThroughputBps = ("throughput_Bps", "UDP throughput (bytes/s, UDP header included)", BytesPerSecond, FiveNumbers),
        LossRate = ("loss_rate", "loss rate", Ratio, FiveNumbers),
        Lost = ("lost", "packets lost", Packets, FiveNumbers),
        DropsQueue = ("drops_queue", "pkts dropped (q)", Packets, FiveNumbers),
        DropsRed = ("drops_red", "pkts dropped (r)", Packets, FiveNumbers),
        DropsAqm = ("drops_aqm", "pkts dropped (CoDel, PIE)", Packets, FiveNumbers),
        DropsError = ("drops_error", "pkts dropped (e)", Packets, FiveNumbers),
        SpacingP50Ms = ("spacing_p50_ms", "spacing 50% (ms)", Milliseconds, FiveNumbers),
        SpacingP75Ms = ("spacing_p75_ms", "spacing 75% (ms)", Milliseconds, FiveNumbers),
        SpacingP90Ms = ("spacing_p90_ms", "spacing 90% (ms)", Milliseconds, FiveNumbers),
        SpacingMaxMs = ("spacing_max_ms", "spacing max (ms)", Milliseconds, FiveNumbers),
        DelayP50Ms = ("delay_p50_ms", "one-way delay 50% (ms)", Milliseconds, FiveNumbers),
        DelayP75Ms = ("delay_p75_ms", "one-way delay 75% (ms)", Milliseconds, FiveNumbers),
        DelayP90Ms = ("delay_p90_ms", "one-way delay 90% (ms)", Milliseconds, FiveNumbers),
        DelayP99Ms = ("delay_p99_ms", "one-way delay 99% (ms)", Milliseconds, FiveNumbers),
        DelayMaxMs = ("delay_max_ms", "one-way delay max (ms)", Milliseconds, FiveNumbers),
    }
}

catalogue! {
    /// The per-probe-flow metrics (scheme `ping`, one class per `ping` flow): round-trip times from the client host's capture (`ping_flows.csv`), the same in both modes.
    PingMetric {
        RttP50Ms = ("rtt_p50_ms", "probe round trip 50% (ms)", Milliseconds, FiveNumbers),
        RttP90Ms = ("rtt_p90_ms", "probe round trip 90% (ms)", Milliseconds, FiveNumbers),
        RttP99Ms = ("rtt_p99_ms", "probe round trip 99% (ms)", Milliseconds, FiveNumbers),
        RttMeanMs = ("rtt_mean_ms", "probe round trip mean (ms)", Milliseconds, FiveNumbers),
        RttMinMs = ("rtt_min_ms", "probe round trip min (ms)", Milliseconds, FiveNumbers),
        RttMaxMs = ("rtt_max_ms", "probe round trip max (ms)", Milliseconds, FiveNumbers),
        ProbeLossRate = ("probe_loss_rate", "probes lost / sent", Ratio, FiveNumbers),
    }
}

catalogue! {
    /// The per-object metrics of pages, summarised per class (scheme `page`, classes `c1` ... `cN`: seed 002's connection classes). The names are those of the connection metrics where they mean the same; elapsed time and throughput are the server-side ones of seed 002's appendix.
    PageClassMetric {
        ElapsedS = ("elapsed_s", "elapsed time, server side (s)", Seconds, FiveNumbers),
        ThroughputBps = ("throughput_Bps", "throughput, server side (bytes/s)", BytesPerSecond, FiveNumbers),
        RexmtPkts = ("rexmt_pkts", "rexmt data pkts", Packets, FiveNumbers),
        Dupacks = ("dupacks", "duplicate acks", Packets, FiveNumbers),
        TripleDupacks = ("triple_dupacks", "triple dupacks", Packets, FiveNumbers),
        SackPkts = ("sack_pkts", "sack pkts sent (client)", Packets, FiveNumbers),
        DropsQueue = ("drops_queue", "pkts dropped (q)", Packets, FiveNumbers),
        DropsError = ("drops_error", "pkts dropped (e)", Packets, FiveNumbers),
        AckDropsQueue = ("ack_drops_queue", "ACK-dir pkts dropped (q)", Packets, FiveNumbers),
        AckDropsError = ("ack_drops_error", "ACK-dir pkts dropped (e)", Packets, FiveNumbers),
    }
}

catalogue! {
    /// The metrics of class `page` (scheme `page`): per page, then the numbers of seed 002's summary tables computed once per point from the classes' summaries (their five numbers are that one value, n the runs).
    PageMetric {
        ResponseS = ("response_s", "response time, client side (s)", Seconds, FiveNumbers),
        TotalS = ("total_s", "total time of a basic test, server side (s)", Seconds, FiveNumbers),
        SumMaxDrops = ("sum_max_drops", "Σ maximum drops (per class and counter the largest, q and e, both directions)", Packets, PerPoint),
        DropsQueueMed = ("drops_queue_med", "drops (c) median: the largest per-class median of data-direction queue drops", Packets, PerPoint),
        DropsErrorMed = ("drops_error_med", "drops (e) median: the largest per-class median of data-direction error drops", Packets, PerPoint),
    }
}

catalogue! {
    /// Seed 004's metrics of each run (scheme `bottleneck`, class `bottleneck`), named as its tables' columns.
    BottleneckMetric {
        UtilPct = ("util_pct", "bottleneck utilisation (%)", Percent, FiveNumbers),
        QueueMeanPkts = ("queue_mean_pkts", "mean queue (pkts)", Packets, FiveNumbers),
        QueueMaxPkts = ("queue_max_pkts", "max queue (pkts)", Packets, FiveNumbers),
        Drops = ("drops", "drops (pkts)", Packets, FiveNumbers),
        Marks = ("marks", "ECN marks (pkts)", Packets, FiveNumbers),
        GoodputMeanMbps = ("goodput_mean_Mbps", "per-flow goodput μ (Mbit/s)", MbitPerSecond, FiveNumbers),
        GoodputSdMbps = ("goodput_sd_Mbps", "per-flow goodput σ (Mbit/s)", MbitPerSecond, FiveNumbers),
        GoodputCov = ("goodput_cov", "goodput σ/μ", Ratio, FiveNumbers),
        GoodputJain = ("goodput_jain", "goodput Jain's index", Ratio, FiveNumbers),
        Transfers = ("transfers", "short transfers completed", Count, FiveNumbers),
        TransferMeanMs = ("transfer_mean_ms", "transfer time μ (ms)", Milliseconds, FiveNumbers),
        TransferSdMs = ("transfer_sd_ms", "transfer time σ (ms)", Milliseconds, FiveNumbers),
        TransferCov = ("transfer_cov", "transfer time σ/μ", Ratio, FiveNumbers),
    }
}

catalogue! {
    /// The metrics of class `host-<name>` (scheme `thin`), named as the columns of seed 003's tables (extract §4.4).
    ThinMetric {
        LatMeanMs = ("lat_mean_ms", "ACK latency mean (ms)", Milliseconds, FiveNumbers),
        LatP40Ms = ("lat_p40_ms", "ACK latency 40th percentile (ms)", Milliseconds, FiveNumbers),
        LatP50Ms = ("lat_p50_ms", "ACK latency 50th percentile (ms)", Milliseconds, FiveNumbers),
        LatP60Ms = ("lat_p60_ms", "ACK latency 60th percentile (ms)", Milliseconds, FiveNumbers),
        LatP70Ms = ("lat_p70_ms", "ACK latency 70th percentile (ms)", Milliseconds, FiveNumbers),
        LatP80Ms = ("lat_p80_ms", "ACK latency 80th percentile (ms)", Milliseconds, FiveNumbers),
        LatP90Ms = ("lat_p90_ms", "ACK latency 90th percentile (ms)", Milliseconds, FiveNumbers),
        LatP93Ms = ("lat_p93_ms", "ACK latency 93rd percentile (ms)", Milliseconds, FiveNumbers),
        LatP95Ms = ("lat_p95_ms", "ACK latency 95th percentile (ms)", Milliseconds, FiveNumbers),
        LatP96Ms = ("lat_p96_ms", "ACK latency 96th percentile (ms)", Milliseconds, FiveNumbers),
        LatP97Ms = ("lat_p97_ms", "ACK latency 97th percentile (ms)", Milliseconds, FiveNumbers),
        LatP98Ms = ("lat_p98_ms", "ACK latency 98th percentile (ms)", Milliseconds, FiveNumbers),
        LatP99Ms = ("lat_p99_ms", "ACK latency 99th percentile (ms)", Milliseconds, FiveNumbers),
        LatP999Ms = ("lat_p99_9_ms", "ACK latency 99.9th percentile (ms)", Milliseconds, FiveNumbers),
        LatP9999Ms = ("lat_p99_99_ms", "ACK latency 99.99th percentile (ms)", Milliseconds, FiveNumbers),
        LatMaxMs = ("lat_max_ms", "ACK latency max (ms)", Milliseconds, FiveNumbers),
        Streams = ("streams", "streams", Count, FiveNumbers),
        IttMinMs = ("itt_min_ms", "ITT avg, lowest stream (ms)", Milliseconds, FiveNumbers),
        IttAvgMs = ("itt_avg_ms", "ITT avg, mean over streams (ms)", Milliseconds, FiveNumbers),
        IttMaxMs = ("itt_max_ms", "ITT avg, highest stream (ms)", Milliseconds, FiveNumbers),
        PayloadMinB = ("payload_min_B", "payload avg, lowest stream (B)", Bytes, FiveNumbers),
        PayloadAvgB = ("payload_avg_B", "payload avg, mean over streams (B)", Bytes, FiveNumbers),
        PayloadMaxB = ("payload_max_B", "payload avg, highest stream (B)", Bytes, FiveNumbers),
        SentPkts = ("sent_pkts", "data packets sent", Packets, FiveNumbers),
        LostPkts = ("lost_pkts", "data packets lost", Packets, FiveNumbers),
        RetrPkts = ("retr_pkts", "retransmitted packets", Packets, FiveNumbers),
        RdbPkts = ("rdb_pkts", "RDB packets", Packets, FiveNumbers),
        PayloadBytes = ("payload_bytes", "payload bytes", Bytes, FiveNumbers),
        UniqueBytes = ("unique_bytes", "unique bytes", Bytes, FiveNumbers),
        RedundantBytes = ("redundant_bytes", "redundant bytes (RDB + retransmitted)", Bytes, FiveNumbers),
        RetrBytes = ("retr_bytes", "retransmitted bytes", Bytes, FiveNumbers),
        LossBytesPct = ("loss_bytes_pct", "byte loss (%)", Percent, FiveNumbers),
        LossPktsPct = ("loss_pkts_pct", "packet loss (%)", Percent, FiveNumbers),
        Dupacks = ("dupacks", "duplicate ACKs", Packets, FiveNumbers),
        RdbHits = ("rdb_hits", "RDB hits", Packets, FiveNumbers),
        RdbMisses = ("rdb_misses", "RDB misses", Packets, FiveNumbers),
        LatRanges = ("lat_ranges", "byte ranges with an ACK latency", Count, FiveNumbers),
        ThroughputBps = ("throughput_Bps", "throughput, headers included (B/s, sum over streams)", BytesPerSecond, FiveNumbers),
        GoodputBps = ("goodput_Bps", "goodput (B/s, sum over streams)", BytesPerSecond, FiveNumbers),
        RdbBytes = ("rdb_bytes", "RDB bytes (already sent, bundled)", Bytes, FiveNumbers),
    }
}

impl RunMetric {
    /// Seed 001's figures of a run's parallel connections (`parallel` in `metrics.json`).
    pub fn of_parallel_connections(self) -> bool {
        matches!(
            self,
            RunMetric::Jain10kX100
                | RunMetric::RxMin
                | RunMetric::RxMax
                | RunMetric::Rx10kMin
                | RunMetric::Rx10kMax
        )
    }
}

/// Every metric key of every scheme (a reference's metric is one of these).
pub fn all_keys() -> Vec<&'static str> {
    fn keys<M: Metric>() -> impl Iterator<Item = &'static str> {
        M::ALL.iter().map(|m| m.key())
    }
    let mut v: Vec<&'static str> = vec![];
    let all = keys::<ConnMetric>()
        .chain(keys::<UdpMetric>())
        .chain(keys::<PingMetric>())
        .chain(keys::<PageClassMetric>())
        .chain(keys::<PageMetric>())
        .chain(keys::<BottleneckMetric>())
        .chain(keys::<ThinMetric>())
        .chain(keys::<RunMetric>());
    for k in all {
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v
}

/// The label of a metric key of any scheme (the key itself when none has it).
pub fn label_of(key: &str) -> &str {
    fn find<M: Metric>(key: &str) -> Option<&'static str> {
        M::from_key(key).map(|m| m.label())
    }
    find::<ConnMetric>(key)
        .or_else(|| find::<UdpMetric>(key))
        .or_else(|| find::<PingMetric>(key))
        .or_else(|| find::<PageClassMetric>(key))
        .or_else(|| find::<PageMetric>(key))
        .or_else(|| find::<BottleneckMetric>(key))
        .or_else(|| find::<ThinMetric>(key))
        .or_else(|| find::<RunMetric>(key))
        .unwrap_or(key)
}

/// The seed's latency percentiles of [`ThinMetric`]: (metric, percentile).
pub const LAT_PERCENTILES: [(ThinMetric, f64); 14] = [
    (ThinMetric::LatP40Ms, 40.0),
    (ThinMetric::LatP50Ms, 50.0),
    (ThinMetric::LatP60Ms, 60.0),
    (ThinMetric::LatP70Ms, 70.0),
    (ThinMetric::LatP80Ms, 80.0),
    (ThinMetric::LatP90Ms, 90.0),
    (ThinMetric::LatP93Ms, 93.0),
    (ThinMetric::LatP95Ms, 95.0),
    (ThinMetric::LatP96Ms, 96.0),
    (ThinMetric::LatP97Ms, 97.0),
    (ThinMetric::LatP98Ms, 98.0),
    (ThinMetric::LatP99Ms, 99.0),
    (ThinMetric::LatP999Ms, 99.9),
    (ThinMetric::LatP9999Ms, 99.99),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are unique within a scheme and round-trip through `from_key`.
    #[test]
    fn keys_are_unique_per_scheme() {
        fn check<M: Metric>() {
            for m in M::ALL {
                assert_eq!(M::from_key(m.key()), Some(*m), "{m:?}");
            }
        }
        check::<ConnMetric>();
        check::<RunMetric>();
        check::<UdpMetric>();
        check::<PageClassMetric>();
        check::<PageMetric>();
        check::<BottleneckMetric>();
        check::<ThinMetric>();
        assert_eq!(ConnMetric::ALL.len(), 19);
        assert_eq!(RunMetric::ALL.len(), 19);
        assert_eq!(ThinMetric::ALL.len(), 40);
        assert_eq!(label_of("elapsed_s"), "elapsed time (s)");
        assert_eq!(label_of("util_pct"), "bottleneck utilisation (%)");
        assert_eq!(label_of("nonsense"), "nonsense");
    }
}
