// main() of relabel, evaluate and synth: RANKSHAPE_COMMAND names the
// function of cmd/commands.h that the binary runs (set in cmd/BUILD).
#include "cmd/commands.h"

int main(int argc, char** argv) { return rankshape::cmd::RANKSHAPE_COMMAND(argc, argv); }
