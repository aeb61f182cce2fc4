// mpisentry_man_pages CONFIG-FILE OUTPUT-DIR: writes mpisentry.1 and
// mpisentry.conf.5 into OUTPUT-DIR, the second's description taken from the
// shipped CONFIG-FILE.
#include "launcher/man_pages.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: mpisentry_man_pages CONFIG-FILE OUTPUT-DIR\n";
    return 2;
  }
  std::ifstream config_file(argv[1]);
  if (!config_file) {
    std::cerr << "mpisentry_man_pages: cannot read " << argv[1] << '\n';
    return 1;
  }
  std::ostringstream config_text;
  config_text << config_file.rdbuf();
  const std::string dir = argv[2];
  for (const auto& [name, page] : {std::pair{dir + "/mpisentry.1", mpisentry::launcher::command_man_page()},
                                   std::pair{dir + "/mpisentry.conf.5",
                                             mpisentry::launcher::config_man_page(config_text.str())}}) {
    std::ofstream out(name);
    if (!(out << page) || !out.flush()) {
      std::cerr << "mpisentry_man_pages: cannot write " << name << '\n';
      return 1;
    }
  }
  return 0;
}
