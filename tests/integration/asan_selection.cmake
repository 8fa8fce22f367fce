# What the ASan half (scripts/test --asan) runs of the integration tests, chosen by coverage.
#
# The ASan half exists to run the sanitised code (the daemon, cosched-ctl, cosched-run, qsubmit, cosched-sim,
# cosched-cluster, the policies and the sensors) under AddressSanitizer and UBSan; the release half runs every
# case of every test. scripts/asan-selection measures and chooses: on a gcov build (-O0 --coverage) it runs
# the units, then each case alone, and picks a short set of cases that, with the units, executes every line
# of sanitised code that all the cases together execute. The lists below come from that method on
# 2026-11-27, with the nine longest tests (slurm, qsubmit, cluster, coschedule, mpi, bandwidth, faults,
# suspend, cpu_locks) run case by case and the others whole: 4,024 lines beyond the units', reached in about
# 155 s of cases instead of 442 s. So the ASan half runs no line less than before. Lines that one run of a
# case reaches and another does not (timing) may differ; the release half still runs every case.
#
# COSCHED_ASAN_COVERED: tests whose every sanitised line other cases reach (label asan-covered; the asan test
# preset leaves them out: `ctest --preset asan -N -L asan-covered` lists them).
# COSCHED_ASAN_CASES_<test>: the cases of <test> the ASan half runs (label asan-cases).
# A test named in neither runs whole. A new test runs whole until it is measured.
set(COSCHED_ASAN_COVERED
  integration.time_sharing
  integration.pdpa_real
  integration.slurm_cgroup
  integration.foundation
  integration.report
  integration.docs
  install.layout)

set(COSCHED_ASAN_CASES_integration.slurm
  CoschedJobs.test_two_cosched_jobs_share_the_node_each_on_its_own_cpu
  NodeGate.test_pdpa_keeps_a_third_job_in_slurms_queue_until_it_admits_it
  QsubmitOnSlurm.test_bad_input_submits_nothing
  QsubmitOnSlurm.test_replays_the_shipped_workload_and_its_jobs_csv_agrees_with_slurms_records)
set(COSCHED_ASAN_CASES_integration.qsubmit
  BadInput.test_unknown_policy_is_bad_input
  ClosedWorkload.test_successors_are_submitted_after_their_predecessor_ends_plus_think_time
  ExistingRm.test_socket_uses_a_running_rm
  Interrupt.test_ctrl_c_stops_jobs_and_the_private_rm
  NativeRun.test_default_out_is_under_the_data_home_not_the_current_directory
  UnmanagedJobs.test_jobs_that_ran_without_the_rm_are_counted)
set(COSCHED_ASAN_CASES_integration.cluster
  ClusterTest.test_a_rank_that_exits_frees_its_cpus_within_a_quantum)
set(COSCHED_ASAN_CASES_integration.coschedule
  LearnedPairs.test_perf_fair_with_exploration_ranks_bbma_pair_worst
  SmtSiblings.test_groups_share_cores_on_a_modelled_smt_machine)
set(COSCHED_ASAN_CASES_integration.mpi
  MpiTest.test_bad_register_rank_is_refused)
set(COSCHED_ASAN_CASES_integration.bandwidth
  AppReported.test_bbma_and_nbbma_report_their_traffic
  QuantaWindowPairs.test_high_runs_with_low_more_often_than_with_its_like)
set(COSCHED_ASAN_CASES_integration.faults
  Faults.test_many_concurrent_short_jobs)
set(COSCHED_ASAN_CASES_integration.cpu_locks
  CpuLocks.test_overlapping_cpus_are_refused_naming_the_other_rm)

# cosched_asan_selection(<test> <cases-var> <labels-var>): in a sanitised build, the case names to pass to
# <test>'s script and its extra label.
function(cosched_asan_selection name cases_var labels_var)
  set(labels ${${labels_var}})
  if(name IN_LIST COSCHED_ASAN_COVERED)
    list(APPEND labels asan-covered)
  elseif(DEFINED COSCHED_ASAN_CASES_${name})
    set(${cases_var} ${COSCHED_ASAN_CASES_${name}} PARENT_SCOPE)
    list(APPEND labels asan-cases)
  endif()
  set(${labels_var} ${labels} PARENT_SCOPE)
endfunction()

# cosched_asan_label(<test>): the same label for a test added with add_test() in the current directory.
function(cosched_asan_label name)
  if(COSCHED_SANITIZE AND name IN_LIST COSCHED_ASAN_COVERED)
    set_property(TEST ${name} APPEND PROPERTY LABELS asan-covered)
  endif()
endfunction()
