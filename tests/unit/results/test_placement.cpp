// The trace layout rule of qs/trace_placement.hpp: named CPUs, first fit for native runs, oversubscription.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "qs/trace_placement.hpp"
#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::job;
using sample::segment;

// A segment without cpu_list, as a native run records it.
CpuSegment unnamed(double t0, double t1, int cpus) {
  CpuSegment s;
  s.t0 = t0;
  s.t1 = t1;
  s.cpus = cpus;
  return s;
}

// Rows each job's pieces landed on.
std::map<std::size_t, std::set<int>> rows_by_job(const Placement& p) {
  std::map<std::size_t, std::set<int>> rows;
  for (const auto& piece : p.pieces) rows[piece.job_index].insert(piece.row);
  return rows;
}

TEST(Placement, NamedCpusAreKept) {
  Placement p = place_on_cpus(sample::four_job_run());
  EXPECT_EQ(p.machine_rows, 4);
  EXPECT_EQ(p.rows, 4);
  auto rows = rows_by_job(p);
  EXPECT_EQ(rows[0], (std::set<int>{0, 1}));
  EXPECT_EQ(rows[1], (std::set<int>{2, 3}));
  EXPECT_EQ(rows[2], (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(rows.count(3), 0U);  // never ran: nothing drawn
}

// trace_pieces counts what place_on_cpus draws: a named segment's CPUs, an unnamed one's `cpus`, and
// nothing for a segment that held no time.
TEST(Placement, PiecesCountedAsDrawn) {
  results::Run run;
  run.machine_cpus = 4;
  CpuSegment named = unnamed(0, 10, 3);
  named.cpu_list = {0, 1, 2};
  run.jobs.push_back(job(1, "a", 0, 0, 10, {named}));                                        // 3
  run.jobs.push_back(job(2, "b", 0, 0, 20, {unnamed(0, 10, 2), unnamed(10, 20, 4)}));       // 2 + 4
  run.jobs.push_back(job(3, "c", 5, 5, 5, {unnamed(5, 5, 4), unnamed(6, 5, 2)}));           // 0: no time
  EXPECT_EQ(trace_pieces(run), 9U);
  EXPECT_EQ(place_on_cpus(run).pieces.size(), 9U);
}

TEST(Placement, NativeFirstFitOverTime) {
  results::Run run;
  run.machine_cpus = 4;
  run.jobs.push_back(job(1, "a", 0, 0, 10, {unnamed(0, 10, 2)}));     // rows 0,1
  run.jobs.push_back(job(2, "b", 0, 0, 10, {unnamed(0, 10, 3)}));     // rows 2,3 + oversubscribed row 4
  run.jobs.push_back(job(3, "c", 10, 10, 20, {unnamed(10, 20, 2)}));  // rows 0,1 are free again at 10
  run.jobs.push_back(job(4, "d", 5, 5, 15, {unnamed(5, 15, 1)}));     // all 5 rows busy at 5: a new row 5
  Placement p = place_on_cpus(run);
  auto rows = rows_by_job(p);
  EXPECT_EQ(rows[0], (std::set<int>{0, 1}));
  EXPECT_EQ(rows[1], (std::set<int>{2, 3, 4}));
  EXPECT_EQ(rows[2], (std::set<int>{0, 1}));
  EXPECT_EQ(rows[3], (std::set<int>{5}));
  EXPECT_EQ(p.machine_rows, 4);
  EXPECT_EQ(p.rows, 6);
  // Same input, same layout.
  Placement again = place_on_cpus(run);
  ASSERT_EQ(again.pieces.size(), p.pieces.size());
  for (std::size_t i = 0; i < p.pieces.size(); ++i) EXPECT_EQ(again.pieces[i].row, p.pieces[i].row);
}

TEST(Placement, NativeJobKeepsItsRowsAcrossSegments) {
  results::Run run;
  run.machine_cpus = 4;
  run.jobs.push_back(job(1, "a", 0, 0, 10, {unnamed(0, 5, 2), unnamed(5, 10, 2)}));
  run.jobs.push_back(job(2, "b", 0, 0, 10, {unnamed(0, 10, 2)}));
  auto rows = rows_by_job(place_on_cpus(run));
  EXPECT_EQ(rows[0], (std::set<int>{0, 1}));
  EXPECT_EQ(rows[1], (std::set<int>{2, 3}));
}

TEST(Placement, ConflictingNamedCpusGoToOversubscribedRows) {
  results::Run run;
  run.machine_cpus = 2;
  run.jobs.push_back(job(1, "a", 0, 0, 10, {segment(0, 10, {0})}));
  run.jobs.push_back(job(2, "b", 0, 2, 8, {segment(2, 8, {0})}));
  run.jobs.push_back(job(3, "c", 0, 10, 12, {segment(10, 12, {0})}));  // touching, not overlapping: keeps CPU 0
  auto rows = rows_by_job(place_on_cpus(run));
  EXPECT_EQ(rows[0], (std::set<int>{0}));
  EXPECT_EQ(rows[1], (std::set<int>{2}));
  EXPECT_EQ(rows[2], (std::set<int>{0}));
}

TEST(Placement, NoRowHoldsOverlappingPieces) {
  results::Run run;
  run.machine_cpus = 3;
  for (int i = 0; i < 40; ++i) {
    double t0 = (i * 7) % 13;
    run.jobs.push_back(job(i + 1, "x", 0, t0, t0 + 1 + i % 5,
                           {i % 2 ? segment(t0, t0 + 1 + i % 5, {i % 3}) : unnamed(t0, t0 + 1 + i % 5, 1 + i % 4)}));
  }
  Placement p = place_on_cpus(run);
  std::map<int, std::vector<std::pair<double, double>>> by_row;
  for (const auto& piece : p.pieces) by_row[piece.row].push_back({piece.t0, piece.t1});
  for (auto& [row, spans] : by_row) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first) << "row " << row;
  }
}

}  // namespace
}  // namespace cosched::results
