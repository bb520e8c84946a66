// c3scope: record traces, and read them.
#include "commands.h"

int main(int argc, char** argv) {
  return c3::cli::run(argc, argv);
}
