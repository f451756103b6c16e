#include "rankshape/version.h"

const char* rankshape_version(void) { return RANKSHAPE_VERSION_STRING; }
