#ifndef BLEAGENT_CJSONC_SHIM_H
#define BLEAGENT_CJSONC_SHIM_H
#include <json.h>
#endif
