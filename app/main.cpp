#include "commands.hpp"

int main(int argc, char** argv) {
  return tb::app::main_with_args(std::vector<std::string>(argv, argv + argc));
}
