//! Fixed-bucket histograms (Prometheus' shape: cumulative `le` buckets, a sum
//! and a count), and the bucket bounds of the worker's two timings.

/// Queue wait (start − `run_at_ms`), seconds: from a busy worker's
/// milliseconds to a backlog of an hour.
pub const QUEUE_WAIT_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];

/// Run time (handler start to end), seconds: from an echo to a long job.
pub const RUN_TIME_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0,
];

#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); the last is above every bound.
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
        }
    }

    pub fn observe(&mut self, value: f64) {
        let bucket = self.bounds.partition_point(|&bound| bound < value);
        self.counts[bucket] += 1;
        self.sum += value;
    }

    /// Adds `other`'s observations (same bounds: both are one timing's).
    pub fn merge(&mut self, other: &Histogram) {
        debug_assert_eq!(self.bounds, other.bounds);
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.sum += other.sum;
    }

    /// `(upper bound, observations at or below it)` per bucket, then
    /// `(None, count)` for `+Inf`.
    pub fn cumulative(&self) -> impl Iterator<Item = (Option<f64>, u64)> + '_ {
        let bounds = self.bounds.iter().map(|&b| Some(b)).chain([None]);
        bounds.zip(self.counts.iter().scan(0, |total, n| {
            *total += n;
            Some(*total)
        }))
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_fall_in_the_first_bucket_whose_bound_holds_them() {
        let mut h = Histogram::new(&[1.0, 2.0]);
        for v in [0.5, 1.0, 1.5, 2.0, 7.0] {
            h.observe(v);
        }
        let buckets: Vec<_> = h.cumulative().collect();
        assert_eq!(buckets, vec![(Some(1.0), 2), (Some(2.0), 4), (None, 5)]);
        assert_eq!(h.count(), 5);
        assert_eq!(h.sum(), 12.0);
        let mut twice = h.clone();
        twice.merge(&h);
        assert_eq!(twice.cumulative().last(), Some((None, 10)));
        assert_eq!(twice.sum(), 24.0);
    }
}
