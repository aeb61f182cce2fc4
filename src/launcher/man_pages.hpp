// The man pages mpisentry(1) and mpisentry.conf(5), in troff, made at build
// time from the tables that --help reads (flags.def, checks.def), so that
// they cannot drift from the command.
#pragma once

#include <string>
#include <string_view>

namespace mpisentry::launcher {

std::string command_man_page();
// `config_file` is the text of the shipped config/mpisentry.conf: its leading
// comment block, which explains the syntax, is the page's description.
std::string config_man_page(std::string_view config_file);

}  // namespace mpisentry::launcher
