//! One binning filled from many threads at once: the fills of a scan that Polars' streaming
//! engine runs, one call per morsel (about 10^5 rows) from the engine's own threads, while they
//! decode the next ones.
//!
//! Two ways to count, chosen once per scan:
//! - [`Counting::Inline`]: each call counts its morsel on the calling thread alone (no fan-out
//!   over a pool of our own, which would fight the decoder for the same cores and wait for its
//!   slowest thread on every morsel), into one of a few private partials, added at the end.
//! - [`Counting::Batched`]: the calls hand their morsels (shared, not copied) to one feeder
//!   thread, which fills batches of many morsels on a device: the GPU (the cores are left to the
//!   decoder; one transfer and one synchronization per batch, not per morsel), or every core for
//!   binnings whose cells are too many to keep a partial per thread or to count per morsel.
//!
//! The counts are those of one fill of all the morsels: a histogram is exact whatever the order
//! of its fills.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use polars::prelude::*;

use super::Histogram;
use crate::error::{HistError, HistResult};
use crate::options::Device;

/// Rows a batched fill counts at once: enough that a GPU's transfer and synchronization, or a
/// fan-out over every core, cost little beside the counting (64 MiB of float32). On an H200
/// host, 4 GiB of float32 in memory went up and was counted at 12 GB/s in batches of 2^22 rows,
/// 26 in batches of 2^24 and 35 in batches of 2^26, each batch one buffer (in morsels of 10^5
/// rows, one copy and launch each, 4.6-5.7 GB/s: `benches/files_profile.py`, 2026-12-02).
pub const BATCH_ROWS: usize = 1 << 24;
/// Morsels waiting for the feeder, at most: what a scan holds beyond the batch it counts (about
/// a batch of morsels of 10^5 rows, so that the decoder goes on while a batch is counted).
const QUEUED_MORSELS: usize = 256;
/// Memory the inline partials may take together; a binning too large for a few of them within
/// it is batched instead.
const PARTIALS_BYTES: usize = 256 << 20;
/// Cells beyond which a morsel is too small to count alone (the counting would mostly add a
/// partial's cells): such binnings are batched.
const INLINE_CELLS: usize = 1 << 16;

/// How a [`Sink`] counts its morsels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// On the calling thread, alone, into private partials.
    Inline,
    /// In batches of morsels, on one feeder thread, on this device.
    Batched(Device),
}

impl Counting {
    /// How a scan counts on `device` (`Auto` resolved by the caller): batched on the GPU;
    /// inline on the CPU unless the binning has too many cells for a partial per thread.
    pub fn for_device(device: Device, cells: usize, weighted: bool) -> Counting {
        let cell_bytes = if weighted { 16 } else { 8 };
        match device {
            Device::Gpu => Counting::Batched(Device::Gpu),
            _ if cells > INLINE_CELLS || cells * cell_bytes * 2 > PARTIALS_BYTES => {
                Counting::Batched(Device::Cpu)
            }
            _ => Counting::Inline,
        }
    }
}

/// A histogram that many threads fill at once (see the module's header).
pub struct Sink {
    /// Empty, its binning and dtypes fixed: what every partial is made from.
    template: Histogram,
    counting: Counting,
    partials: Partials,
    feeder: Option<Feeder>,
    /// Rows handed to [`Sink::fill`] so far (the progress of a scan), the calls, and the time
    /// the calls took (ns, summed over threads: a profile of where a scan's time goes).
    rows: AtomicU64,
    calls: AtomicU64,
    busy_ns: AtomicU64,
    /// The first error of any fill: later fills stop at once, and the caller raises this one.
    failure: Mutex<Option<HistError>>,
}

impl Sink {
    /// A sink counting into copies of `template`'s binning (its counts are not read).
    pub fn new(template: &Histogram, counting: Counting) -> HistResult<Sink> {
        let mut template = template.empty_like()?;
        let cells = template.len().max(1);
        let bytes = cells * if template.is_weighted() { 16 } else { 8 };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let limit = (PARTIALS_BYTES / bytes).clamp(1, 2 * threads);
        let feeder = match counting {
            Counting::Inline => {
                template.options.device = Device::Cpu;
                None
            }
            Counting::Batched(device) => {
                let mut batched = template.empty_like()?;
                batched.options.device = device;
                Some(Feeder::start(batched)?)
            }
        };
        Ok(Sink {
            template,
            counting,
            partials: Partials::new(limit),
            feeder,
            rows: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            failure: Mutex::new(None),
        })
    }

    pub fn counting(&self) -> Counting {
        self.counting
    }

    /// Rows handed to the sink so far.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// The calls so far and the seconds they took, summed over the threads that made them.
    pub fn profile(&self) -> (u64, f64) {
        let busy = self.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9;
        (self.calls.load(Ordering::Relaxed), busy)
    }

    /// Counts one morsel: `columns` (one per axis, of one length) and the weights of a
    /// weighted binning. An error is kept for [`Sink::failure`] and stops every later fill.
    pub fn fill(&self, columns: &[Series], weights: Option<&Series>) -> HistResult<()> {
        if self.failed() {
            return Err(HistError::InvalidArgument(
                "an earlier morsel of this scan failed; its error is raised".into(),
            ));
        }
        crate::interrupt::check()?;
        let start = std::time::Instant::now();
        let result = match &self.feeder {
            None => self.fill_inline(columns, weights),
            Some(feeder) => feeder.send(columns, weights),
        };
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        match result {
            Ok(()) => {
                let rows = columns.first().map_or(0, |c| c.len()) as u64;
                self.rows.fetch_add(rows, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(self.keep(e)),
        }
    }

    fn fill_inline(&self, columns: &[Series], weights: Option<&Series>) -> HistResult<()> {
        let mut partial = self.partials.take(&self.template)?;
        let filled = alone(|| partial.fill(columns, weights));
        self.partials.give(partial);
        filled
    }

    /// The first error of a fill (the feeder's included), taken: the one to raise.
    pub fn failure(&self) -> Option<HistError> {
        if let Some(e) = self.feeder.as_ref().and_then(Feeder::failure) {
            self.keep(e);
        }
        lock(&self.failure).take()
    }

    fn failed(&self) -> bool {
        lock(&self.failure).is_some() || self.feeder.as_ref().is_some_and(Feeder::stopped)
    }

    /// Keeps the first error, and returns its like for the call that met it (Polars reports
    /// that one; the caller raises the one kept).
    fn keep(&self, e: HistError) -> HistError {
        let like = match &e {
            HistError::OutOfMemory(n) => HistError::OutOfMemory(*n),
            HistError::Interrupted => HistError::Interrupted,
            HistError::Gpu(text) => HistError::Gpu(text.clone()),
            other => HistError::InvalidArgument(other.to_string()),
        };
        let mut failure = lock(&self.failure);
        if failure.is_none() {
            *failure = Some(e);
        }
        like
    }

    /// The histogram of every morsel: the partials (and the feeder's batches) added.
    pub fn finish(&self) -> HistResult<Histogram> {
        let mut total = self.template.empty_like()?;
        if let Some(feeder) = &self.feeder {
            match feeder.finish() {
                Ok(Some(fed)) => total.merge(&fed)?,
                Ok(None) => {}
                Err(e) => drop(self.keep(e)),
            }
        }
        if let Some(e) = self.failure() {
            return Err(e);
        }
        for partial in self.partials.drain() {
            total.merge(&partial)?;
        }
        Ok(total)
    }
}

/// `f` counted on the calling thread alone: inside a pool of one thread, the calling one, any
/// parallel step of the counting runs here, in order.
fn alone<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    thread_local! {
        static SOLO: Option<rayon::ThreadPool> = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .ok();
    }
    // Without a pool of its own (the thread is one of our pool's already) the call fans out.
    SOLO.with(|pool| match pool {
        Some(pool) => pool.install(f),
        None => f(),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The inline partials: as many as threads fill at once, at most `limit` (a fill waits for one
/// to be given back beyond that).
struct Partials {
    state: Mutex<(Vec<Histogram>, usize)>,
    given_back: Condvar,
    limit: usize,
}

impl Partials {
    fn new(limit: usize) -> Self {
        Partials {
            state: Mutex::new((Vec::new(), 0)),
            given_back: Condvar::new(),
            limit,
        }
    }

    /// An idle partial, a new one below the limit, or the next one given back.
    fn take(&self, template: &Histogram) -> HistResult<Histogram> {
        let mut state = lock(&self.state);
        loop {
            if let Some(partial) = state.0.pop() {
                return Ok(partial);
            }
            if state.1 < self.limit {
                state.1 += 1;
                drop(state);
                return template
                    .empty_like()
                    .inspect_err(|_| lock(&self.state).1 -= 1);
            }
            state = self
                .given_back
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn give(&self, partial: Histogram) {
        lock(&self.state).0.push(partial);
        self.given_back.notify_one();
    }

    fn drain(&self) -> Vec<Histogram> {
        std::mem::take(&mut lock(&self.state).0)
    }
}

/// A morsel handed to the feeder: its columns and weights.
type Morsel = (Vec<Series>, Option<Series>);

/// The thread that fills batches of morsels (see [`Counting::Batched`]).
struct Feeder {
    sender: Mutex<Option<SyncSender<Morsel>>>,
    thread: Mutex<Option<JoinHandle<HistResult<Histogram>>>>,
    /// Set by the feeder when it stops on an error (its queue is gone then).
    stopped: Arc<AtomicBool>,
}

impl Feeder {
    fn start(histogram: Histogram) -> HistResult<Feeder> {
        let (sender, receiver) = sync_channel(QUEUED_MORSELS);
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let thread = std::thread::Builder::new()
            .name("polars-gpu-hist-feeder".into())
            .spawn(move || {
                let result = feed(histogram, receiver);
                flag.store(result.is_err(), Ordering::Release);
                result
            })
            .map_err(|e| HistError::Internal(format!("starting the scan's feeder ({e})")))?;
        Ok(Feeder {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
            stopped,
        })
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Queues a morsel (the Series share the morsel's buffers); waits while the queue is full.
    fn send(&self, columns: &[Series], weights: Option<&Series>) -> HistResult<()> {
        let gone = || HistError::InvalidArgument("the scan's feeder stopped".into());
        let sender = lock(&self.sender).clone().ok_or_else(gone)?;
        sender
            .send((columns.to_vec(), weights.cloned()))
            .map_err(|_| self.failure().unwrap_or_else(gone))
    }

    /// The feeder's error, once it stopped on one (taken: later calls see None).
    fn failure(&self) -> Option<HistError> {
        match self.stopped() {
            true => self.join().err(),
            false => None,
        }
    }

    /// Closes the queue and waits for the last batch: the feeder's histogram (None where its
    /// result was taken before, as a failure).
    fn finish(&self) -> HistResult<Option<Histogram>> {
        lock(&self.sender).take();
        self.join()
    }

    fn join(&self) -> HistResult<Option<Histogram>> {
        let Some(thread) = lock(&self.thread).take() else {
            return Ok(None);
        };
        match thread.join() {
            Ok(result) => result.map(Some),
            Err(_) => Err(HistError::Internal("the scan's feeder (a panic)".into())),
        }
    }
}

impl Drop for Feeder {
    fn drop(&mut self) {
        // A scan abandoned midway: the feeder ends with its queue, its result unread.
        lock(&self.sender).take();
        let _ = self.join();
    }
}

/// The feeder's loop: morsels gathered into batches of [`BATCH_ROWS`] rows (their chunks side
/// by side, not copied), each filled at once; the rest when the queue closes.
fn feed(mut histogram: Histogram, morsels: Receiver<Morsel>) -> HistResult<Histogram> {
    let batch_rows = BATCH_ROWS.max(histogram.len());
    let mut batch: Option<Morsel> = None;
    let mut rows = 0;
    for (columns, weights) in morsels {
        rows += columns.first().map_or(0, |c| c.len());
        batch = Some(match batch.take() {
            None => (columns, weights),
            Some((mut gathered, mut gathered_weights)) => {
                for (g, c) in gathered.iter_mut().zip(&columns) {
                    g.append(c)?;
                }
                if let (Some(g), Some(w)) = (&mut gathered_weights, &weights) {
                    g.append(w)?;
                }
                (gathered, gathered_weights)
            }
        });
        if rows >= batch_rows {
            let (columns, weights) = batch.take().expect("a batch was gathered");
            crate::boundary::guarded("a scan's batch", || {
                histogram.fill(&columns, weights.as_ref())
            })?;
            rows = 0;
        }
    }
    if let Some((columns, weights)) = batch {
        crate::boundary::guarded("a scan's batch", || {
            histogram.fill(&columns, weights.as_ref())
        })?;
    }
    Ok(histogram)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulator::{AccumulatorOptions, Axis, Storage};

    fn values(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| match i % 97 {
                0 => f64::NAN,
                _ => ((i * 7919) % 100_003) as f64 / 90_000.0 - 0.05,
            })
            .collect()
    }

    /// Morsels filled from many threads at once, inline or by the feeder, count as one fill of
    /// all of them: the counts, the squared weights and the flow.
    #[test]
    fn morsels_from_many_threads_count_as_one_fill() {
        let x = Series::new("x".into(), values(200_000));
        let w = Series::new(
            "w".into(),
            (0..200_000).map(|i| (i % 5) as f64).collect::<Vec<_>>(),
        );
        for storage in [Storage::Count, Storage::Weight] {
            let options = AccumulatorOptions {
                storage,
                ..Default::default()
            };
            let weights = (storage == Storage::Weight).then_some(&w);
            let empty = Histogram::new(vec![Axis::regular(64, 0.0, 1.0)], options).unwrap();
            let mut whole = empty.try_clone().unwrap();
            whole.fill(std::slice::from_ref(&x), weights).unwrap();
            for counting in [Counting::Inline, Counting::Batched(Device::Cpu)] {
                let sink = Sink::new(&empty, counting).unwrap();
                std::thread::scope(|scope| {
                    for part in 0..8 {
                        let (sink, x, weights) = (&sink, &x, weights);
                        scope.spawn(move || {
                            let m = x.slice(part * 25_000, 25_000);
                            let mw = weights.map(|w| w.slice(part * 25_000, 25_000));
                            sink.fill(&[m], mw.as_ref()).unwrap();
                        });
                    }
                });
                assert_eq!(sink.rows(), 200_000);
                let got = sink.finish().unwrap();
                assert_eq!(got.counts(), whole.counts(), "{counting:?} {storage:?}");
                assert_eq!(got.squared_weights(), whole.squared_weights());
                assert_eq!(got.flow(), whole.flow());
            }
        }
    }

    /// A fill that fails is kept, stops later fills and is the one `finish` returns.
    #[test]
    fn the_first_failure_is_kept() {
        let empty = Histogram::new(
            vec![Axis::regular(4, 0.0, 1.0)],
            AccumulatorOptions::default(),
        )
        .unwrap();
        for counting in [Counting::Inline, Counting::Batched(Device::Cpu)] {
            let sink = Sink::new(&empty, counting).unwrap();
            let strings = Series::new("s".into(), ["a", "b"]);
            let first = sink.fill(&[strings], None);
            let failed = match counting {
                Counting::Inline => first.is_err(),
                // The feeder meets the error in its batch, when the queue closes.
                Counting::Batched(_) => sink.finish().is_err(),
            };
            assert!(failed, "{counting:?}");
        }
    }
}
