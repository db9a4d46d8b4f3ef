// jetagent's entry point; everything else lives in the libraries.
#include "cli.h"

int main(int argc, char** argv)
{
    return jetagent::runCli(argc, argv);
}
