// `twinbench shell SCENARIO [options] -- COMMAND [ARGS...]`: COMMAND behind the scenario's link
// (emulated/shell.hpp, docs/real-clients.md).
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "twinbench/emulated/shell.hpp"
#include "twinbench/studies/reproduce.hpp"
#include "twinbench/sim/sim_backend.hpp"

namespace tb::app {

namespace {

struct ShellArgs {
  std::string scenario;
  bool tls = false;
  emulated::ShellOptions shell;
};

}  // namespace

Command add_shell_command(CLI::App& app) {
  auto a = std::make_shared<ShellArgs>();
  auto status = std::make_shared<int>(0);
  auto* cmd = app.add_subcommand(
      "shell",
      "Run COMMAND behind the scenario's link and TCP settings, the benchmark server (or "
      "--server-command) on the far side (needs CAP_NET_ADMIN): twinbench shell SCENARIO -- "
      "COMMAND [ARGS...]. COMMAND finds the server in $TWINBENCH_SERVER_URL (and the CA in "
      "$TWINBENCH_CA_FILE under HTTPS); its exit status is the shell's");
  cmd->add_option("scenario", a->scenario,
                  "Scenario or profile textproto file (its network, TCP and TLS sections), or "
                  "the built-in profile lightsail-2026")
      ->required();
  cmd->add_option("command", a->shell.command, "The command and its arguments, after --")
      ->required();
  cmd->add_flag("--tls", a->tls, "HTTPS (the scenario's tls section, or its defaults)");
  cmd->add_option("--server-command", a->shell.server_command,
                  "Run this (with /bin/sh -c) in the server namespace instead of the benchmark "
                  "server; it must listen on $TWINBENCH_SERVER_ADDRESS:$TWINBENCH_SERVER_PORT");
  cmd->add_option("--server-port", a->shell.server_port,
                  "The port --server-command listens on (default 8927)");
  cmd->add_option("--user", a->shell.user, "Run COMMAND as this user instead of root");
  cmd->add_option("--report", a->shell.report,
                  "Write the link's timing report (settings, packets, lateness, validity) as JSON");
  cmd->add_option("--tls-ca-out", a->shell.ca_out,
                  "Write the server's root certificate here (default: a temporary file, removed "
                  "at the end)");
  cmd->add_option("--seed", a->shell.seed, "Seed of the link's loss and jitter");
  cmd->add_flag("--quiet,-q", a->shell.quiet, "No summary line on stderr");
  return {cmd,
          [a, status] {
            // Only the network, TLS and TCP sections matter here: a profile will do.
            twinbench::Scenario scenario = studies::load_profile(a->scenario);
            if (a->tls) scenario.mutable_tls();
            sim::require_simulatable(scenario, a->scenario);
            *status = emulated::run_shell(scenario, a->shell);
          },
          status};
}

}  // namespace tb::app
