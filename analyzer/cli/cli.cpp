// The c3scope command line (every subcommand), shared by c3scope and c3scope-mpi.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include "c3/analyzer/summary/distributed.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/version.h"
#include "commands.h"

namespace c3::cli {
analyzer::Comm* g_comm = nullptr;
std::vector<std::string> g_after_dashdash;
bool g_had_dashdash = false;
bool failed_anywhere(analyzer::Comm* comm, const std::string& line) {
  if (comm == nullptr) {
    if (!line.empty()) error_line(line);
    return !line.empty();
  }
  if (!comm->any(!line.empty())) return false;
  const std::vector<std::string> all = comm->gather(line, 0);
  for (const std::string& l : all) {
    if (!l.empty()) {
      error_line(l);
      break;
    }
  }
  return true;
}

void error_line(const std::string& msg) {
  // One line, whatever the message quotes (a file name with a newline in it).
  std::cerr << "c3scope: " << tracedb::printable(msg) << "\n";
}
}  // namespace c3::cli

namespace {

int run_main(int argc, char** argv) {
  using namespace c3::cli;
  CLI::App app{"c3scope: profile concurrent computation and communication on GPUs", "c3scope"};
  app.set_version_flag("--version", std::string("c3scope ") + c3::tracedb::kC3scopeVersion);
  app.require_subcommand(1);
  std::map<const CLI::App*, Action> actions;
  auto reg = [&](Action (*add)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    Action a = add(app);
    actions[app.get_subcommands({})[before]] = std::move(a);
  };
  reg(&add_record);
  reg(&add_info);
  reg(&add_schema);
  reg(&add_import);
  reg(&add_analyze);
  reg(&add_export);
  reg(&add_compare);
  // `record`: CLI11 would parse the command's own flags; everything after "--" belongs to the
  // command. Every other subcommand leaves "--" to CLI11, where it ends the options, so a file
  // named with a leading dash can follow it (import -o X -- -x.json).
  int parsed_argc = argc;
  for (int i = 1; i < argc && argc > 1 && std::string(argv[1]) == "record"; ++i) {
    if (std::string(argv[i]) == "--") {
      parsed_argc = i;
      g_had_dashdash = true;
      for (int j = i + 1; j < argc; ++j) g_after_dashdash.emplace_back(argv[j]);
      break;
    }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, then where to look; CLI11's own output is a page of usage.
    std::string where = "c3scope --help";
    for (auto* sub : app.get_subcommands()) where = "c3scope " + sub->get_name() + " --help";
    error_line(std::string(e.what()) + " (see '" + where + "')");
    return kExitUsage;
  }
  std::string running;  // the command, so that an error no command caught still names it
  try {
    for (auto* sub : app.get_subcommands()) {
      auto it = actions.find(sub);
      running = sub->get_name();
      if (it != actions.end()) return it->second();
    }
  } catch (const std::exception& e) {
    error_line((running.empty() ? "" : running + ": ") + e.what());
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace

int c3::cli::run(int argc, char** argv) {
  int rc = c3::cli::kExitUsage;
  try {
    rc = run_main(argc, argv);
  } catch (const std::exception& e) {
    c3::cli::error_line(e.what());
  } catch (...) {
    c3::cli::error_line("unexpected error");
  }
  // A report that did not reach standard output (a full disk, /dev/full, a closed pipe) is a
  // failure, not a success.
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = errno;
  if (flush_failed || std::ferror(stdout) != 0 || !std::cout.good()) {
    c3::cli::error_line(
        std::string("cannot write to standard output: ") +
        (err != 0 ? std::strerror(err) : "a write failed (a full disk or a closed pipe?)"));
    rc = c3::cli::kExitUsage;
  }
  return rc;
}
