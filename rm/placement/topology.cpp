#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <set>

namespace cosched::rm {

Result<Topology> Topology::load(const CpuSet& managed, const std::string& synthetic) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return make_error(Errc::io_error, "hwloc_topology_init failed");
  struct Guard {
    hwloc_topology_t t;
    ~Guard() { hwloc_topology_destroy(t); }
  } guard{topo};
  if (!synthetic.empty() && hwloc_topology_set_synthetic(topo, synthetic.c_str()) != 0) {
    return make_error(Errc::invalid_argument, "bad synthetic topology '" + synthetic + "' (hwloc syntax, e.g. package:2 core:4 pu:2)");
  }
  if (hwloc_topology_load(topo) != 0) return make_error(Errc::io_error, "hwloc_topology_load failed");

  // Without an explicit set, manage what this process may run on (hwloc's allowed cpuset).
  CpuSet wanted = managed;
  if (wanted.empty()) {
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    for (int c = hwloc_bitmap_first(allowed); c >= 0; c = hwloc_bitmap_next(allowed, c)) wanted.set(c);
  }

  Topology t;
  std::set<int> packages;
  std::set<std::pair<int, int>> seen_cores;
  int max_pus_per_core = 1;
  int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int last_core_logical = -1;
  int dense_core = -1;
  for (int i = 0; i < npu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    int os = static_cast<int>(pu->os_index);
    if (!wanted.test(os)) continue;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
    int core_logical = core != nullptr ? static_cast<int>(core->logical_index) : i;
    if (core_logical != last_core_logical) {
      ++dense_core;
      last_core_logical = core_logical;
    }
    t.order_.push_back(os);
    t.core_of_.push_back(dense_core);
    packages.insert(pkg != nullptr ? static_cast<int>(pkg->logical_index) : 0);
    seen_cores.insert({core_logical, 0});
    if (core != nullptr) max_pus_per_core = std::max(max_pus_per_core, hwloc_bitmap_weight(core->cpuset));
  }
  CpuSet found = CpuSet::of(t.order_);
  if (!(found == wanted)) {
    CpuSet missing = wanted - found;
    return make_error(Errc::invalid_argument, "CPUs " + missing.to_string() + " are not on this machine (it has " +
                                                  std::to_string(npu) + " PUs)");
  }
  if (t.order_.empty()) return make_error(Errc::invalid_argument, "no CPUs to manage");
  t.machine_.cpus = static_cast<int>(t.order_.size());
  t.machine_.cores = static_cast<int>(seen_cores.size());
  t.machine_.packages = static_cast<int>(packages.size());
  t.machine_.threads_per_core = max_pus_per_core;
  t.description_ = std::to_string(t.machine_.packages) + " package(s), " + std::to_string(t.machine_.cores) +
                   " core(s), " + std::to_string(t.machine_.cpus) + " CPU(s) managed: " + found.to_string();
  return t;
}

}  // namespace cosched::rm
