// The replay program of a fuzz target: feeds every file named on the
// command line (a directory: each regular file in it, sorted) to the
// target's LLVMFuzzerTestOneInput, as libFuzzer would, without libFuzzer.
// It lets the g++ build (CI has no clang) run each corpus as a unit test;
// a crash fails the test, and the file's name is printed before each run
// so that the log says which input did it.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg = argv[i];
        if (!fs::is_directory(arg)) {
            files.push_back(arg);
            continue;
        }
        std::vector<fs::path> in;
        for (const auto& e : fs::directory_iterator(arg))
            if (e.is_regular_file()) in.push_back(e.path());
        std::sort(in.begin(), in.end());
        files.insert(files.end(), in.begin(), in.end());
    }
    // An empty corpus would pass while proving nothing: a missing or
    // misnamed directory is a failure.
    if (files.empty()) {
        std::fprintf(stderr, "no corpus files given\n");
        return 2;
    }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "cannot read %s\n", f.c_str());
            return 2;
        }
        const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::fprintf(stderr, "replay %s (%zu bytes)\n", f.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replayed %zu files\n", files.size());
    return 0;
}
