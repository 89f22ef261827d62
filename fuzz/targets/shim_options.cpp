// Fuzz target: the shim's option block (src/shim/options.c with the
// isolation and limits options of namespaces.c and limits.c, the shim's
// own C compiled for the host). The input is the task's saved process
// spec as the manager writes it (words, a NUL after each), which
// `taskscope-shim --exec` reads back with shim_parse_spec; the same words
// are then parsed as a task shim's whole command line
// (shim_parse_command: --exit-file, the words, "--", PROGRAM, ARGV0), and
// a --groups list taken through parse_groups. The parsers have no state
// of their own (each call starts from a zeroed struct opts).
// Properties: no crash, overread or hang on any bytes (the text is in a
// buffer of exactly its size plus the NUL the reader writes, so ASan sees
// a read past it); every string the result holds points at the start of
// one of the input's words; every count stays within its array and every
// number within its range; an accepted spec has --uid, --gid and --cwd;
// a good spec still parses after any input.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
extern "C" {
#include "shim/options.h"
#include "shim/shim_protocol.h"
}

using namespace taskscope;

namespace {

// exec.c's bound on the saved spec's words.
constexpr int kMaxWords = 1024;

struct Words {
    std::set<const char*> starts;
    bool has(const char* p) const { return p == nullptr || starts.count(p) != 0; }
};

void checkOpts(const opts& o, const Words& w) {
    for (const char* p :
         {static_cast<const char*>(o.exit_file), o.cwd, o.stdin_path, o.stdout_path, o.stderr_path, o.release_fifo,
          o.netns, o.groups, o.iso.root, o.iso.alloc_dir, o.iso.secrets_dir, o.iso.hosts_name, o.iso.hosts_address})
        fuzz::check(w.has(p), "a string that is not one of the input's words");
    fuzz::check(o.njoin >= 0 && o.njoin <= MAX_JOIN, "njoin out of range");
    for (int i = 0; i < o.njoin; ++i) fuzz::check(w.has(o.join[i]), "a join path that is not a word");
    const auto& iso = o.iso;
    fuzz::check(iso.nbinds >= 0 && iso.nbinds <= ISO_MAX_BINDS, "nbinds out of range");
    for (int i = 0; i < iso.nbinds; ++i)
        fuzz::check(w.has(iso.binds[i]) && iso.binds[i][0] == '/', "a bind that is not an absolute word");
    fuzz::check(iso.nvolumes >= 0 && iso.nvolumes <= ISO_MAX_VOLUMES, "nvolumes out of range");
    for (int i = 0; i < iso.nvolumes; ++i) {
        const auto& v = iso.volumes[i];
        fuzz::check(w.has(v.src) && w.has(v.dst) && v.src[0] == '/' && v.dst[0] == '/', "a volume's paths");
        fuzz::check(v.prop == ISO_PROP_PRIVATE || v.prop == ISO_PROP_HOST_TO_TASK || v.prop == ISO_PROP_BIDIRECTIONAL,
                    "a volume's propagation out of range");
    }
    fuzz::check(iso.ndevices >= 0 && iso.ndevices <= ISO_MAX_DEVICES, "ndevices out of range");
    for (int i = 0; i < iso.ndevices; ++i)
        fuzz::check(w.has(iso.devices[i].host) && w.has(iso.devices[i].task), "a device's paths");
    for (int n : {iso.dns.nservers, iso.dns.nsearches, iso.dns.noptions})
        fuzz::check(n >= 0 && n <= ISO_MAX_DNS, "a dns count out of range");
    for (int i = 0; i < iso.dns.nservers; ++i) fuzz::check(w.has(iso.dns.servers[i]), "a dns server");
    for (int i = 0; i < iso.dns.nsearches; ++i) fuzz::check(w.has(iso.dns.searches[i]), "a dns search");
    for (int i = 0; i < iso.dns.noptions; ++i) fuzz::check(w.has(iso.dns.options[i]), "a dns option");
    if (iso.secrets_size) fuzz::check(iso.secrets_size >= 4096, "secrets_size below a page");
    const auto& l = o.limits;
    fuzz::check(l.nrlimits >= 0 && l.nrlimits <= MAX_RLIMITS, "nrlimits out of range");
    for (int i = 0; i < l.nrlimits; ++i)
        fuzz::check(
            l.rlimits[i].resource >= 0 && l.rlimits[i].resource < MAX_RLIMITS && l.rlimits[i].soft <= l.rlimits[i].hard,
            "an rlimit out of range");
    if (l.have_oom_score_adj)
        fuzz::check(l.oom_score_adj >= SHIM_OOM_SCORE_ADJ_MIN && l.oom_score_adj <= SHIM_OOM_SCORE_ADJ_MAX,
                    "oom_score_adj out of range");
    if (o.groups) {
        gid_t groups[MAX_GROUPS];
        int n = -1;
        if (parse_groups(o.groups, groups, &n) == 0)
            fuzz::check(n >= 0 && n <= MAX_GROUPS, "a group count out of range");
    }
}

// The exec path: the saved spec, as exec.c's read_spec hands it over.
void spec(const uint8_t* data, size_t size) {
    std::vector<char> text(data, data + size);
    text.push_back('x');  // the byte the reader makes a NUL: its buffer's last
    std::vector<char*> argv(kMaxWords + 2);
    opts o;
    const int e = shim_parse_spec(text.data(), size, argv.data(), kMaxWords, &o);
    fuzz::check(e == 0 || e == E2BIG || e == EINVAL, "an error that is not E2BIG or EINVAL");
    if (e) return;
    Words w;
    for (size_t i = 0; i < size; i += std::strlen(text.data() + i) + 1) w.starts.insert(text.data() + i);
    checkOpts(o, w);
    fuzz::check(o.cwd && o.have_uid && o.have_gid, "a spec accepted without --uid, --gid or --cwd");
}

// The task's own shim: the same words inside a whole command line.
void command(const uint8_t* data, size_t size) {
    std::vector<std::string> words = {"taskscope-shim", SHIM_OPT_EXIT_FILE, "/exits/x"};
    std::string cur;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            words.push_back(cur);
            cur.clear();
        } else {
            cur += static_cast<char>(data[i]);
        }
    }
    if (!cur.empty()) words.push_back(cur);
    if (words.size() > kMaxWords) return;
    words.insert(words.end(), {SHIM_OPT_END, "/bin/true", "true"});
    // Each word in its own allocation of its exact size, as the kernel's argv is not, so
    // that ASan sees any read past a word's NUL.
    std::vector<std::unique_ptr<char[]>> store;
    std::vector<char*> argv;
    for (const auto& s : words) {
        store.emplace_back(new char[s.size() + 1]);
        std::memcpy(store.back().get(), s.c_str(), s.size() + 1);
        argv.push_back(store.back().get());
    }
    argv.push_back(nullptr);
    opts o;
    if (shim_parse_command(static_cast<int>(words.size()), argv.data(), &o) < 0) return;
    Words w;
    for (auto* p : argv)
        if (p) w.starts.insert(p);
    checkOpts(o, w);
    fuzz::check(o.exit_file && o.prog && o.argv && o.argv[0], "a command accepted without its program");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    spec(data, size);
    command(data, size);
    // A good spec's words, each with its NUL: "\000", since a "\0" before
    // a digit would take the digit into the escape.
    static const char kGood[] = "--uid\0001000\000--gid\0001000\000--cwd\000/\000--groups\0001,2\000";
    std::vector<char> good(kGood, kGood + sizeof kGood);
    std::vector<char*> argv(kMaxWords + 2);
    opts o;
    fuzz::check(shim_parse_spec(good.data(), sizeof kGood - 1, argv.data(), kMaxWords, &o) == 0 && o.uid == 1000,
                "a good spec no longer parses after this input");
    return 0;
}
