#include "closed.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace cosched::swfgen {

Result<swf::Workload> generate_closed(const Config& config, int copies) {
  if (copies < 1) return make_error(Errc::invalid_argument, "--closed: need at least 1 copy per application");
  if (config.duration_s <= 0) return make_error(Errc::invalid_argument, "--closed needs --duration");
  for (const auto& a : config.apps) {
    if (a.procs < 1 || a.runtime_mean_s <= 0) {
      return make_error(Errc::invalid_argument, "--closed: application " + std::to_string(a.executable) +
                                                    " needs PROCS and RUNTIME_S in --apps (EXE:WEIGHT:PROCS:RUNTIME_S)");
    }
  }
  struct Pending {
    swf::Job job;
    std::size_t chain;
    std::size_t step;
  };
  std::vector<Pending> all;
  std::size_t chain = 0;
  for (const auto& a : config.apps) {
    const auto length = static_cast<std::size_t>(std::max(1.0, std::ceil(config.duration_s / a.runtime_mean_s)));
    for (int c = 0; c < copies; ++c, ++chain) {
      for (std::size_t k = 0; k < length; ++k) {
        swf::Job j;
        j.submit_s = static_cast<double>(k) * a.runtime_mean_s;
        j.run_s = a.runtime_mean_s;
        j.allocated_procs = a.procs;
        j.requested_procs = a.procs;
        j.status = swf::kCompleted;
        j.user = 1;
        j.executable = a.executable;
        j.think_time_s = k == 0 ? -1 : 0;
        all.push_back({j, chain, k});
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Pending& a, const Pending& b) { return a.job.submit_s < b.job.submit_s; });
  // Numbers in file order; each successor names its chain's previous job.
  std::vector<std::int64_t> last_of_chain(chain, -1);
  swf::Workload w;
  for (std::size_t i = 0; i < all.size(); ++i) {
    swf::Job j = all[i].job;
    j.number = static_cast<std::int64_t>(i + 1);
    if (all[i].step > 0) j.preceding_job = last_of_chain[all[i].chain];
    last_of_chain[all[i].chain] = j.number;
    w.jobs.push_back(j);
  }
  w.header.set("Version", "2.2");
  w.header.set("MaxProcs", std::to_string(config.max_procs));
  w.header.set("MaxJobs", std::to_string(w.jobs.size()));
  w.header.add_comment("closed system (Polychronopoulos et al. 4.2.1): " + std::to_string(copies) +
                       " instance(s) of each application, each resubmitted on completion for " +
                       std::to_string(config.duration_s) + " s; apps " + format_apps(config.apps));
  return w;
}

}  // namespace cosched::swfgen
