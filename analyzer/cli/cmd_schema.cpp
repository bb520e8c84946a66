// c3scope schema: prints the trace schema reference (docs/schema.md is this output).
#include <iostream>

#include "c3/tracedb/schema.h"
#include "commands.h"

namespace c3::cli {

Action add_schema(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "Print the trace schema reference (Markdown)");
  auto sql = std::make_shared<bool>(false);
  cmd->add_flag("--sql", *sql, "Print the CREATE statements instead");
  return [sql] {
    if (*sql) {
      std::cout << tracedb::create_tables_sql() << tracedb::create_views_sql()
                << tracedb::create_indexes_sql();
    } else {
      std::cout << tracedb::schema_markdown();
    }
    return kExitOk;
  };
}

}  // namespace c3::cli
