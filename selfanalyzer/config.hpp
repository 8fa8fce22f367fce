// Parameters of the SelfAnalyzer, with their bounds. The Analyzer sizes every buffer from a sanitised
// Config in its constructor, so the per-event path never allocates (docs/selfanalyzer.md, "Parameters").
#pragma once

namespace cosched::sa {

// Hard bounds: they keep the fixed arrays small and the per-event loop short.
inline constexpr int kMaxPeriodLimit = 8192;  // longest period (regions per iteration) the DPD can find
inline constexpr int kMaxWindow = 32;         // iteration times kept per team size
inline constexpr int kMaxHistory = 8;         // distinct team sizes remembered for the Amdahl fit
inline constexpr int kMaxBatch = 4096;        // most detected iterations timed as one sample

struct Config {
  // Baseline measurement (PDPA paper §3.1: "a few initial iterations ... with a small number of
  // processors"). The RM may override baseline_cpus through RmBlock::baseline_cpus.
  int baseline_cpus = 1;        // team size of the baseline; clamped to the granted allocation
  int baseline_iterations = 3;  // clean iterations whose median is the baseline time
  // A bounded baseline (issue 29, "measurement must never cost the job"; our choice, the paper's baseline
  // always completes): an attempt in which this many samples (an iteration, or a batch of short ones:
  // min_sample_s) ran different teams in their regions is abandoned — a program whose team changes inside
  // every iteration (reads of the team size latched before some of its regions) never gives a clean one.
  // So is an attempt that took this many timed samples of any kind without completing (lost to outside
  // load, outliers): the phase is bounded in time. Iterations discarded for stops or a moved CPU set do not
  // count. The job then runs its whole grant again
  // and tries again after baseline_backoff_iterations iterations, doubling after every failed attempt. 10:
  // PDPA's unmeasured_iterations (the RM stops waiting for a report then anyway).
  int baseline_max_samples = 10;
  int baseline_backoff_iterations = 20;

  // Measurement at the granted allocation P.
  int window = 5;               // iteration times per median (the last `window` clean iterations)
  int min_report_samples = 3;   // clean iterations at P before the first report at P

  // Dynamic Periodicity Detector.
  int max_period = 1024;        // longest period searched (the per-event cost does not depend on it)
  int confirm_repeats = 2;      // a period m is accepted once its pattern matched `confirm_repeats` times
  int min_matches = 6;          // ... and at least this many consecutive events matched (guards period 1)

  // Change detector (iteration time jumps at an unchanged team size).
  double jump_high = 2.0;       // a sample > jump_high × running median is an outlier
  double jump_low = 0.5;        // a sample < jump_low × running median is an outlier
  int jump_confirm = 2;         // consecutive outliers on the same side that mean "behaviour changed"
  int jump_min_samples = 3;     // samples at the current team size before times are judged at all

  int history = 4;              // distinct team sizes remembered (most recent first)

  // Comparing like with like (docs/selfanalyzer.md). Both values are our choice, not the PDPA paper's.
  // At the baseline size a job's iteration time must match its baseline within this relative tolerance (a
  // speedup in [0.8, 1.2] against itself) to be reported; beyond 3× the measured spread as well, its work
  // changed (another data size, a drifting iteration) and the measurement starts over. 0.2: twice the
  // spread a quiet machine shows here.
  double same_work_tolerance = 0.2;
  // A speedup above cpus × (1 + margin) cannot come from the same work and is never reported; the
  // measurement starts over. 0.5 leaves room for the cache effects that make real codes superlinear.
  double superlinear_margin = 0.5;
  // Samples whose relative spread exceeds this are too noisy for an early report: the first report at a
  // team size then waits for a full window (data-dependent work needs more iterations to be seen).
  double noisy_spread = 0.25;
  // Outside load. A sample whose threads' share of time spent runnable but waiting for a CPU differs from
  // its window's by more than this was measured under another load (work cosched does not control) and is
  // discarded; a baseline and samples at P whose levels differ so are not compared. Our choice: a quiet
  // machine shows under 2 % here, one busy loop sharing a job's CPU about 50 %.
  double max_wait_fraction = 0.1;
  // A window whose load level differs from the baseline's is not reported; the baseline is measured again only
  // once windows have differed from it this long without a break. Our choice: longer than the transient of a neighbour's arrival (its
  // runtime starting on every CPU until the RM confines it: about 0.4 s on the 2-CPU test machine), short
  // against the seconds a PDPA evaluation lasts.
  double load_hold_s = 1.0;

  // Reports at P: at most one per this interval once the first report at P exists (0: one per iteration).
  // A program whose iterations last microseconds would otherwise pay the Amdahl fit and a seqlock publish at
  // every region; the RM reads reports once per quantum anyway. libcosched uses 5 ms.
  double min_report_interval_s = 0;

  // Detected iterations shorter than this are timed in batches: the clock is read and a sample taken only
  // every `batch` boundaries, with `batch` doubling while a batch lasts less than min_sample_s (and halving
  // above 4×). A sample is then the batch's mean iteration time. 0: every iteration is a sample. Keeps
  // period-1 codes with microsecond iterations from paying a clock read and a median per region;
  // libcosched uses 0.5 ms. The explicit API is never batched.
  double min_sample_s = 0;
};

// How long threads a libomp team released keep spinning on their CPUs before they sleep, in seconds, from
// KMP_BLOCKTIME and OMP_WAIT_POLICY as libomp reads them (either may be null): KMP_BLOCKTIME is a number of
// milliseconds, or of seconds, minutes, hours or days with the suffix s, m, h or d, or "infinite";
// without it OMP_WAIT_POLICY=active spins for ever and passive not at all; otherwise libomp's default,
// 200 ms. Capped at 1 s (our choice: a longer wait would hold up every measurement after a shrink, and a
// spinner that never sleeps is a lasting load that the outside-load check sees). A malformed value: 200 ms,
// as libomp falls back to its default.
[[nodiscard]] double released_spin_s(const char* kmp_blocktime, const char* omp_wait_policy) noexcept;

// Returns `c` with every field forced into its documented range (never fails, never throws): the
// Analyzer runs inside arbitrary programs and must not abort on a bad environment variable.
[[nodiscard]] Config sanitize(Config c) noexcept;

}  // namespace cosched::sa
