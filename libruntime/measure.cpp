#include "measure.hpp"

#include <time.h>

#include <algorithm>
#include <new>

#include "selfanalyzer/analyzer.hpp"
#include "selfanalyzer/arena_report.hpp"
#include "constructs.hpp"
#include "cpu_wait.hpp"
#include "efficiency_sampler.hpp"
#include "spin_control.hpp"
#include "team_control.hpp"
#include "tool_state.hpp"

namespace cosched::rt {
namespace {

// All of this is touched by one thread only: the thread that initialised the tool (the initial thread),
// which is the one that begins outermost regions. Other threads that begin regions are not measured.
proto::Arena* g_arena = nullptr;
sa::Analyzer* g_analyzer = nullptr;
// initial-exec: a plain %fs-relative load, not a __tls_get_addr call per region (a dlopen'ed library may
// use the static TLS surplus glibc reserves for this; one byte here).
// One struct: one TLS offset to load on the hot path.
struct MeasuringThread {
  bool measuring;     // the thread that initialised the tool
  int expected_team;  // the team measure_region was told for the region now beginning (0: none pending)
};
__attribute__((tls_model("initial-exec"))) thread_local MeasuringThread tl_thread = {false, 0};

std::uint64_t g_published_seq = 0;
std::uint64_t g_published_version = ~std::uint64_t{0};  // Analyzer::progress_version() last published
proto::Phase g_published_phase = proto::Phase::none;
std::uint32_t g_seen_stops = 0;
std::uint32_t g_seen_baseline = 0;
// The raw RM words and floor follow_rm last acted on (~0: never, so the first call acts).
std::uint32_t g_seen_flags = ~0U;
std::uint32_t g_seen_base_raw = ~0U;
int g_seen_floor = -1;
std::uint64_t g_seen_generation = 0;
// Analyzer::iterations() when an iteration was last discarded for a CPU-set change.
constexpr std::uint64_t kNever = ~std::uint64_t{0};
std::uint64_t g_discard_at_iterations = kNever;
int g_granted_before = 0;  // the grant of the previous region: the CPU set a change moved the team from
int g_team_before = 0;     // the team of the previous region (measure_region's `team`)
int g_default_baseline = 1;  // COSCHED_BASELINE
std::uint64_t g_released_spin_ns = 0;  // how long workers a team released keep spinning (Options)
bool g_seen_no_baseline = false;
bool g_seen_baseline_waits = false;

// A baseline by narrowing (docs/selfanalyzer.md, "Teams that cannot shrink"): when the team cannot run the
// baseline itself, the job asks the RM for fewer CPUs and keeps its team; its samples are keyed by the CPUs
// it ran on (measure_region's `used`), so they are the baseline the grant is judged against.
// Our choice: how long the job waits for the RM to narrow its CPUs before it runs its baseline without them
// (an RM that enforces nothing, or one older than the request): ten of the RM's default 100-ms quanta.
constexpr std::uint64_t kNarrowWaitNs = 1'000'000'000ULL;
int g_raw_baseline = 1;         // the baseline asked for (RM or COSCHED_BASELINE), before the team floor raised it
int g_narrow_asked = 0;         // JobBlock::narrow_cpus as written (0: no request)
std::uint64_t g_narrow_since_ns = 0;
bool g_narrow_refused = false;  // not asked again: the RM did not narrow within kNarrowWaitNs, or see below
std::uint32_t g_narrowed_restarts = ~0U;  // Analyzer::restarts() when a narrowed baseline last ended (~0: judged)
int g_narrowed_impossible = 0;  // narrowed baselines in a row that ended in an impossible speedup
// Our choice: how many narrowed baselines in a row may end in an impossible speedup before the job stops
// asking. One may be the machine: on the 2-vCPU guest a 2-thread team runs at two speeds, 1.6 apart, for
// phases of 0.5-3 s, natively too (libomp and libgomp alike), so a baseline and the window after it can
// straddle a change. Two in a row are the baseline's own cost (see follow_narrowing).
constexpr int kNarrowedImpossibleLimit = 2;
// A narrowed baseline that ends unfinished (the loop's lock was lost, or the attempt abandoned) cost the job
// its CPUs while it ran narrowed and gave nothing: GROMACS under PDPA on 2 CPUs relocked its
// loop every 0.1-0.3 s and so spent half its run narrowed (3.0 s against 2.2 s natively). The next request
// waits, doubling from kNarrowBackoffMinNs to kNarrowBackoffMaxNs; a finished baseline resets it. Our choice:
// 2 s is twenty of the RM's default quanta, so an unfinished attempt costs at most about a tenth of the time.
constexpr std::uint64_t kNarrowBackoffMinNs = 2'000'000'000ULL;
constexpr std::uint64_t kNarrowBackoffMaxNs = 64'000'000'000ULL;
std::uint64_t g_narrow_backoff_ns = 0;   // the wait after the last unfinished narrowed baseline (0: none)
std::uint64_t g_narrow_retry_at_ns = 0;  // no request before this time (0: none pending)

inline std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// What the RM changed since the last region: an iteration during which the RM stopped the job is not a
// clean sample, and a new baseline allocation takes effect at once. A new team size is seen by the Analyzer
// itself. An iteration during which the CPU set of a team that fills it changed (threads migrated, caches
// went cold, a neighbour just started) is discarded too; a team smaller than its CPU set (a 1-CPU baseline
// on 16 CPUs) is not disturbed by the set changing around it. Never two in a row: with jobs arriving
// every few seconds, a long iteration (a 1-CPU baseline iteration of a big code) would otherwise never
// complete (found with cosched-sim on PDPA's w1), so the iteration after a discarded one is kept whatever
// happens to the CPU set, and the change detector ignores a single perturbed sample.
struct RmWords {
  std::uint32_t stops;
  std::uint32_t flags;
  std::uint32_t base_raw;
  int floor;
  std::uint64_t generation;
};

inline RmWords read_rm() noexcept {
  const auto& rm = g_arena->rm;
  return RmWords{rm.stops.load(std::memory_order_relaxed), rm.flags.load(std::memory_order_relaxed),
                 rm.baseline_cpus.load(std::memory_order_relaxed), team_floor(),
                 rm.generation.load(std::memory_order_relaxed)};
}

// Nothing changed since follow_rm last acted (every region but a handful): one branch.
inline bool rm_as_seen(const RmWords& w) noexcept {
  return ((w.stops ^ g_seen_stops) | (w.flags ^ g_seen_flags) | (w.base_raw ^ g_seen_base_raw) |
          static_cast<std::uint32_t>(w.floor ^ g_seen_floor) | (w.generation ^ g_seen_generation)) == 0;
}

inline void follow_rm() noexcept {
  const RmWords w = read_rm();
  if (rm_as_seen(w)) return;
  const std::uint32_t stops = w.stops;
  const std::uint32_t flags = w.flags;
  const std::uint32_t base_raw = w.base_raw;
  const std::uint64_t generation = w.generation;
  const int floor = w.floor;
  if (generation != g_seen_generation) {
    g_seen_generation = generation;
    // Discard unless the iteration in progress follows the one discarded last time (see above).
    const std::uint64_t done = g_analyzer->iterations();
    const bool fills = g_analyzer->last_team() >= g_granted_before;
    if (fills && (g_discard_at_iterations == kNever || done > g_discard_at_iterations + 1)) {
      g_analyzer->discard_iteration();
      g_discard_at_iterations = done;
    }
  }
  if (stops != g_seen_stops) {
    g_seen_stops = stops;
    g_analyzer->discard_iteration();
  }
  g_seen_flags = flags;
  g_seen_base_raw = base_raw;
  g_seen_floor = floor;
  const bool no_baseline = (flags & proto::rm_no_baseline) != 0;
  if (no_baseline != g_seen_no_baseline) {
    g_seen_no_baseline = no_baseline;
    g_analyzer->set_baseline_enabled(!no_baseline);
  }
  const bool baseline_waits = (flags & proto::rm_baseline_waits) != 0;
  if (baseline_waits != g_seen_baseline_waits) {
    g_seen_baseline_waits = baseline_waits;
    g_analyzer->set_baseline_waits(baseline_waits);
  }
  // The baseline is never below the smallest team cosched may give (2 unless the job is malleable): a
  // baseline at 1 CPU then needs the RM to narrow the job's CPUs, since its team may not shrink to 1.
  std::uint32_t base = base_raw;
  if (base == 0 || base > static_cast<std::uint32_t>(proto::kMaxCpus)) base = static_cast<std::uint32_t>(g_default_baseline);
  g_raw_baseline = static_cast<int>(base);
  base = std::max(base, static_cast<std::uint32_t>(floor));
  if (base != g_seen_baseline) {
    g_seen_baseline = base;
    g_analyzer->set_baseline_cpus(static_cast<int>(base));
  }
}

inline void ask_narrowing(int cpus) noexcept {
  g_narrow_asked = cpus;
  g_arena->job.narrow_cpus.store(cpus, std::memory_order_relaxed);
}

// Caller: measure_region, after the Analyzer saw the region (its phase may have moved). Runs on the regions
// that are not repeats, which include every sample boundary; one clock read while a request waits.
inline void follow_narrowing(int granted) noexcept {
  sa::Analyzer& a = *g_analyzer;
  const bool baseline = a.phase() == proto::Phase::baseline;
  if (g_narrow_asked == 0) {
    if (!baseline || g_narrow_refused || g_raw_baseline >= granted) return;
    // Narrowed baselines followed by impossible speedups, kNarrowedImpossibleLimit in a row: the team's
    // switching on fewer CPUs (every region's barrier, for a code of hundreds of regions per iteration) made
    // the baseline too slow. Asking again would repeat it at every restart; the job goes back to baselines
    // without narrowing, which are bounded (docs/selfanalyzer.md, "Teams that cannot shrink").
    if (g_narrowed_restarts != ~0U && a.restarts() > g_narrowed_restarts) {  // judged once per narrowed baseline
      const bool impossible = a.last_restart() == proto::MeasureRestart::impossible_speedup;
      g_narrowed_impossible = impossible ? g_narrowed_impossible + 1 : 0;
      g_narrowed_restarts = ~0U;
      if (g_narrowed_impossible >= kNarrowedImpossibleLimit) {
        g_narrow_refused = true;
        return;
      }
    }
    // The team gives a point below the grant by itself unless its floor (a fixed team; 2 threads) reaches
    // the grant, or its regions ran different teams (a read latched at the grant, a clause).
    if (team_floor() < granted && a.baseline_mixed_samples() == 0) return;
    // A narrowed baseline puts the team on fewer CPUs than it has threads for several iterations, which costs
    // the job more than the check is worth once its waiting-time efficiency at the grant is known (the
    // sampler's, docs/selfanalyzer.md, "Two estimates"): the job then runs its baseline as it can (no lower
    // point), and the RM uses the waiting-time estimate.
    const auto& eff = g_arena->efficiency;
    if (eff.reports.load(std::memory_order_relaxed) > 0 && eff.cpus.load(std::memory_order_relaxed) == granted) {
      return;
    }
    // Backing off after an unfinished one: this baseline runs at the grant (no lower point; bounded).
    if (g_narrow_retry_at_ns != 0) {
      if (now_ns() < g_narrow_retry_at_ns) return;
      g_narrow_retry_at_ns = 0;
    }
    ask_narrowing(g_raw_baseline);
    g_narrow_since_ns = now_ns();
    a.hold_samples(true);  // what runs at the grant meanwhile is no baseline sample
    return;
  }
  if (!baseline) {  // the baseline is done (or abandoned, or its loop lost): the RM gives the CPUs back
    if (!a.samples_held()) g_narrowed_restarts = a.restarts();
    if (a.has_baseline()) {
      g_narrow_backoff_ns = 0;
    } else {
      g_narrow_backoff_ns = std::clamp(2 * g_narrow_backoff_ns, kNarrowBackoffMinNs, kNarrowBackoffMaxNs);
      g_narrow_retry_at_ns = now_ns() + g_narrow_backoff_ns;
    }
    ask_narrowing(0);
    a.hold_samples(false);
    return;
  }
  if (!a.samples_held()) return;  // narrowed already
  if (granted <= g_narrow_asked) {  // the RM narrowed: samples count from the next iteration on
    a.hold_samples(false);
    a.discard_iteration();
    return;
  }
  if (now_ns() - g_narrow_since_ns > kNarrowWaitNs) {  // no narrowing from this RM: the baseline as it can
    g_narrow_refused = true;
    ask_narrowing(0);
    a.hold_samples(false);
    a.discard_iteration();
  }
}

// Publishes the analyzer's state into the arena: progress counters when they moved (relaxed stores), the
// report under the job block's seqlock when a new one exists or the phase moved.
inline void publish() noexcept {
  auto& job = g_arena->job;
  const std::uint64_t version = g_analyzer->progress_version();
  proto::Phase phase = g_analyzer->phase();
  std::uint64_t seq = g_analyzer->report_seq();
  if (version == g_published_version && seq == g_published_seq && phase == g_published_phase) return;
  g_published_version = version;
  job.iterations.store(g_analyzer->iterations(), std::memory_order_relaxed);
  job.restart_reason.store(static_cast<std::uint32_t>(g_analyzer->last_restart()), std::memory_order_relaxed);
  job.no_speedup.store(static_cast<std::uint32_t>(g_analyzer->no_speedup()), std::memory_order_relaxed);
  job.unreported_cpus.store(g_analyzer->unreported_cpus(), std::memory_order_relaxed);
  job.unreported_s.store(g_analyzer->unreported_s(), std::memory_order_relaxed);
  job.restarts.store(g_analyzer->restarts(), std::memory_order_relaxed);
  job.cpu_wait.store(g_analyzer->last_cpu_wait(), std::memory_order_relaxed);
  job.contaminated.store(g_analyzer->contaminated(), std::memory_order_relaxed);
  // The counter-free sensor's input: iterations last, so that a reader who sees them sees the time too.
  auto& sensors = g_arena->sensors;
  sensors.clean_team.store(g_analyzer->clean_team(), std::memory_order_relaxed);
  sensors.clean_ns.store(g_analyzer->clean_ns(), std::memory_order_relaxed);
  sensors.clean_wait_ns.store(g_analyzer->clean_wait_ns(), std::memory_order_relaxed);
  sensors.clean_iterations.store(g_analyzer->clean_iterations(), std::memory_order_release);
  if (seq == g_published_seq && phase == g_published_phase) return;
  sa::Report r;
  bool have = g_analyzer->report(r);
  std::uint32_t s = job.seq.load(std::memory_order_relaxed);
  job.seq.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  job.phase.store(static_cast<std::uint32_t>(phase), std::memory_order_relaxed);
  job.period.store(g_analyzer->period(), std::memory_order_relaxed);
  if (have && seq != g_published_seq) sa::store_report(r, job);
  job.seq.store(s + 2, std::memory_order_release);
  g_published_seq = seq;
  g_published_phase = phase;
}

}  // namespace

void measure_init(const Options& opt, proto::Arena* arena) {
  if (!opt.measure) return;  // team sizes only: tl_thread.measuring stays false everywhere
  sa::Config c;
  c.baseline_cpus = opt.baseline_cpus;
  c.baseline_iterations = opt.baseline_iterations;
  c.max_period = opt.max_period;
  c.min_report_interval_s = 0.005;
  // Samples of at least 2 ms: the outside-load check reads one schedstat file per thread per sample.
  c.min_sample_s = 0.002;
  alignas(sa::Analyzer) static unsigned char storage[sizeof(sa::Analyzer)];
  g_analyzer = new (storage) sa::Analyzer(c);  // sizes its arrays now; nothing allocates later
  g_default_baseline = c.baseline_cpus;
  g_released_spin_ns = static_cast<std::uint64_t>(opt.released_spin_s * 1e9);
  cpu_wait_add_self();
  g_analyzer->set_wait_source(&cpu_wait_ns);
  constructs_init(c.max_period, c.confirm_repeats, c.min_matches);
  g_arena = arena;
  g_seen_stops = arena->rm.stops.load(std::memory_order_relaxed);
  g_seen_generation = arena->rm.generation.load(std::memory_order_relaxed);
  tl_thread.measuring = true;
  follow_rm();
  publish();
  efficiency_sampler_start(arena, opt.sample_ms);
}

int measure_wanted_peek(int granted) noexcept {
  return g_analyzer != nullptr ? g_analyzer->team_for(granted) : granted;
}

int measure_wanted(int granted) noexcept {
  if (!tl_thread.measuring) return granted;
  follow_rm();
  return g_analyzer->team_for(granted);
}

void measure_region(std::uintptr_t region_id, int team, int granted) noexcept {
  // Any thread that begins outermost regions, measured or not (and with COSCHED_MEASURE=0): its waiting
  // threads yield while its team outnumbers the job's CPUs. measure_region_repeat needs no such call: it
  // runs only for the grant and team of the previous region.
  spin_follow(team, granted);
  if (!tl_thread.measuring) return;
  tl_thread.expected_team = team;
  g_granted_before = granted;
  cpu_wait_set_oversubscribed(team > granted);
  const int used = std::min(team, std::max(granted, 1));
  // The team shrank with its CPUs: the threads it released outnumber the CPUs left and spin on them until
  // libomp's blocktime ends (a 16-CPU job stepped down by PDPA measured 0.27 efficiency at 15 CPUs, then
  // lost a CPU per report: docs/selfanalyzer.md, "Outside load"). A team that shrinks within its CPUs (a
  // baseline) leaves its spinners idle CPUs, and a team that keeps its size on fewer CPUs (a baseline by
  // narrowing) released no thread: neither waits (the narrowed baseline of a fixed team of 2 waited out
  // the 200-ms blocktime for nothing, on 1 CPU). One clock read, on team changes only.
  if (team < g_team_before && g_team_before > granted && g_released_spin_ns > 0) {
    g_analyzer->quiet_after(now_ns() + g_released_spin_ns);
  }
  g_team_before = team;
  g_analyzer->on_region(static_cast<std::uint64_t>(region_id), used, &now_ns);
  follow_narrowing(granted);
  g_arena->job.regions.store(g_analyzer->regions(), std::memory_order_relaxed);
  publish();
}

bool measure_region_repeat(std::uintptr_t region_id, int granted) noexcept {
  // follow_rm would do nothing, and team_for_region would repeat its last team without side effects; the
  // same grant as the previous region (what cpu_wait_set_oversubscribed was told stays true).
  if (!tl_thread.measuring || granted != g_granted_before || !rm_as_seen(read_rm())) return false;
  sa::Analyzer& analyzer = *g_analyzer;  // loaded once (the epoch's acquire load would force a reload)
  const int team = team_for_region_again(analyzer.team_for(granted));
  // The same grant and team as the previous region (team_for_region_again repeats the team of this
  // thread's last region): the same CPUs for the Analyzer.
  if (team == 0 || !analyzer.on_region_repeat(static_cast<std::uint64_t>(region_id))) return false;
  // The rest of measure_region; publish() would find nothing new (on_region_repeat moves no field it
  // publishes, and every other call into the Analyzer publishes after itself).
  tl_thread.expected_team = team;
  g_arena->job.regions.store(analyzer.regions(), std::memory_order_relaxed);
  return true;
}

void measure_team_formed(int actual) noexcept {
  if (tl_thread.expected_team == 0) return;  // not the master of an outermost region this thread began
  if (actual != tl_thread.expected_team) {
    g_analyzer->discard_iteration();  // rule 5: never measure a team that did not run
    g_arena->job.team_mismatches.fetch_add(1, std::memory_order_relaxed);
  }
  tl_thread.expected_team = 0;
  g_arena->job.last_team.store(actual, std::memory_order_relaxed);
}

void measure_summary() noexcept {
  if (g_analyzer == nullptr) return;
  const char* phases[] = {"none", "detecting", "baseline", "measuring"};
  sa::Report r;
  const bool have = g_analyzer->report(r);
  auto phase = static_cast<unsigned>(g_analyzer->phase());
  warn(false, "job %u: %llu regions, %llu iterations, period %d, phase %s, %llu reports%s", g_tool.job_id,
       static_cast<unsigned long long>(g_analyzer->regions()),
       static_cast<unsigned long long>(g_analyzer->iterations()), g_analyzer->period(),
       phase < 4 ? phases[phase] : "?", static_cast<unsigned long long>(g_analyzer->report_seq()),
       have ? "" : " (none)");
  if (have) {
    warn(false, "job %u: last report: speedup %.3f efficiency %.3f at %d CPUs, iteration %.6f s, baseline %.6f s "
         "at %d", g_tool.job_id, r.speedup, r.efficiency, r.cpus, r.iteration_s, r.baseline_s, r.baseline_team);
  }
}

void measure_iteration_begin(long id) noexcept {
  if (!tl_thread.measuring) return;
  follow_rm();
  const int granted = granted_team();
  g_analyzer->on_iteration_begin(id, now_ns(), std::min(g_analyzer->team_for(granted), std::max(granted, 1)));
  publish();
}

void measure_iteration_end(long id) noexcept {
  if (!tl_thread.measuring) return;
  const int granted = granted_team();
  g_analyzer->on_iteration_end(id, now_ns(), std::min(g_analyzer->team_for(granted), std::max(granted, 1)));
  publish();
}

}  // namespace cosched::rt
