// libmosquitto (Debian libmosquitto-dev, 2.0): the MQTT 3.1.1/5 client the
// fleet layer drives from the agent's event loop. Only Sources/Fleet/MQTT/LibMosquitto.swift imports it.
#ifndef BLEAGENT_CMOSQUITTO_SHIM_H
#define BLEAGENT_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
