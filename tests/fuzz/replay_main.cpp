// The fuzz targets' driver where libFuzzer cannot link (no clang, or no libclang-rt): it replays every
// corpus file named on the command line (files, or directories of files) through LLVMFuzzerTestOneInput once,
// so the targets still build and their seed corpus still runs as a test. libFuzzer's own flags ("-flag=value")
// are accepted and ignored, so the CTest command line is the same in both builds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

bool replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", file.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind('-', 0) == 0) continue;  // a libFuzzer flag
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) replayed += replay(f) ? 1 : 0;
    } else if (fs::exists(arg, ec)) {
      replayed += replay(arg) ? 1 : 0;
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", arg.c_str());
      return 1;
    }
  }
  std::printf("replayed %zu input(s) without libFuzzer: no crash, every property held\n", replayed);
  return replayed > 0 ? 0 : 1;
}
