#define BOOST_TEST_MODULE task_config
#include <boost/test/unit_test.hpp>

#include "nomad/task_config.hpp"

using namespace taskscope::nomad;
using nlohmann::json;

BOOST_AUTO_TEST_CASE(exec_block) {
    auto b = parseTaskBlock(json{{"command", "/bin/sh"},
                                 {"args", {"-c", "true"}},
                                 {"pid_mode", "host"},
                                 {"ipc_mode", "private"},
                                 {"cap_add", {"net_raw"}},
                                 {"cap_drop", {"all"}},
                                 {"work_dir", "/local"}});
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(b->command == "/bin/sh");
    BOOST_TEST(b->args.size() == 2u);
    BOOST_TEST(b->pidHost.value());
    BOOST_TEST(!b->ipcHost.value());
    BOOST_TEST(b->capAdd != 0u);
    BOOST_TEST(b->capDropAll);
    BOOST_TEST(b->workDir == "/local");
    BOOST_TEST(!b->isolation);
}

BOOST_AUTO_TEST_CASE(raw_exec_block_and_nulls) {
    auto b = parseTaskBlock(json{{"command", "/usr/bin/env"},
                                 {"args", nullptr},
                                 {"pid_mode", nullptr},
                                 {"work_dir", "/srv"},
                                 {"denied_envvars", {"SECRET_*"}},
                                 {"cgroup_v2_override", nullptr},
                                 {"cgroup_v1_override", nullptr}});
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(!b->pidHost);
    BOOST_TEST(b->deniedEnvvars.front() == "SECRET_*");
    BOOST_TEST(b->cgroupV2Override.empty());
    BOOST_TEST(!b->cgroupV1Override);
    b = parseTaskBlock(json{{"command", "x"}, {"cgroup_v1_override", json::array({json{{"pids", "a/b"}}})}});
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(b->cgroupV1Override);  // decoded; the builder refuses it with the reason
    b = parseTaskBlock(json{{"command", "x"}, {"pid_mode", ""}});  // exec's "" is unset
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(!b->pidHost);
}

// taskscope's log_journal (issue 59): a bool, unset when left out.
BOOST_AUTO_TEST_CASE(log_journal_key) {
    auto b = parseTaskBlock(json{{"command", "x"}});
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(!b->logJournal);
    for (bool on : {true, false}) {
        b = parseTaskBlock(json{{"command", "x"}, {"log_journal", on}});
        BOOST_REQUIRE(b.ok());
        BOOST_TEST((b->logJournal == on));
    }
    b = parseTaskBlock(json{{"command", "x"}, {"log_journal", nullptr}});
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(!b->logJournal);
    const auto* row = hclblock::find(taskConfigKeys(), "log_journal");
    BOOST_REQUIRE(row);
    BOOST_TEST(std::string(row->hclType) == "bool");
}

BOOST_AUTO_TEST_CASE(bad_blocks_name_the_key) {
    const std::pair<json, const char*> bad[] = {
        {json{{"command", "x"}, {"pid_mode", "bogus"}}, "config.pid_mode"},
        {json{{"command", "x"}, {"ipc_mode", "none"}}, "config.ipc_mode"},
        {json{{"command", "x"}, {"cap_add", {"net_bogus"}}}, "config.cap_add"},
        {json{{"command", "x"}, {"cap_drop", {"sys_bogus"}}}, "config.cap_drop"},
        {json{{"command", "x"}, {"work_dir", "local"}}, "config.work_dir"},
        {json{{"command", "x"}, {"comand", "y"}}, "config.comand"},  // misspelt
        {json{{"command", "x"}, {"isolation", "vm"}}, "config.isolation"},
        {json{{"command", "x"}, {"log_journal", "yes"}}, "config.log_journal"},
        {json{{"command", "x"}, {"cgroup_v2_override", "a"}, {"cgroup_v1_override", {json{{"pids", "b"}}}}},
         "cgroup_v2_override"},
        {json{{"args", {"x"}}}, "config.command"},
    };
    for (const auto& [config, key] : bad) {
        auto b = parseTaskBlock(config);
        BOOST_REQUIRE_MESSAGE(!b.ok(), config.dump());
        BOOST_TEST(b.error().name == "InvalidConfig");
        BOOST_TEST(b.error().message.find(key) != std::string::npos, b.error().message);
    }
}
