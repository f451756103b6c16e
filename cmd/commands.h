// The file-driven commands as functions: each binary's main() is one of
// them (tool_main.cc), and the command-line fuzzer (tests/fuzz) runs them
// in-process with arbitrary arguments. Each returns the exit status: 0, 1
// for bad input or a failed run, 2 for bad usage (cmd/cli.h).
#ifndef RANKSHAPE_CMD_COMMANDS_H_
#define RANKSHAPE_CMD_COMMANDS_H_

namespace rankshape::cmd {

int relabel_main(int argc, char** argv);
int evaluate_main(int argc, char** argv);
int synth_main(int argc, char** argv);

}  // namespace rankshape::cmd

#endif  // RANKSHAPE_CMD_COMMANDS_H_
