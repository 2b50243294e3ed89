// The one error type for what the user must change: a file, an option, a value, or something the
// command needs from the machine. The command line turns it into exit status 2 and every other
// failure into 1, in one place (app/commands.cpp).
#pragma once

#include <stdexcept>

namespace tb {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tb
