#ifndef BLEAGENT_CDBUS_SHIM_H
#define BLEAGENT_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
