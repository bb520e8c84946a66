// Subcommands of the c3scope CLI. Each registers its options on the app and returns the action
// to run when it was chosen; actions return the process exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace c3::analyzer {
class Comm;
}

namespace c3::cli {

// The whole command line (c3scope's main; c3scope-mpi's after MPI is up): the exit code.
int run(int argc, char** argv);

// The processes of a c3scope-mpi run (analyzer/mpi); null in c3scope. Set before run().
extern analyzer::Comm* g_comm;

using Action = std::function<int()>;

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;  // bad flags, bad input files

Action add_record(CLI::App& app);
Action add_info(CLI::App& app);
Action add_schema(CLI::App& app);
Action add_import(CLI::App& app);
Action add_analyze(CLI::App& app);
Action add_export(CLI::App& app);
Action add_compare(CLI::App& app);

// Arguments after a literal "--" (the command of `c3scope record`), split off before parsing.
extern std::vector<std::string> g_after_dashdash;
extern bool g_had_dashdash;

// "c3scope: <msg>" on stderr.
void error_line(const std::string& msg);

// Whether this process or, under c3scope-mpi, any process failed (`line`: its error line, empty
// when it did not); process 0 prints the first failing process's line. Every process calls it
// at the same point.
bool failed_anywhere(analyzer::Comm* comm, const std::string& line);

}  // namespace c3::cli
