// libmosquitto (Debian libmosquitto-dev, 2.0): the MQTT 3.1.1/5 client the
// fleet layer drives from the agent's event loop. Only
// Sources/Fleet/MQTT/LibMosquitto.swift uses it.
//
// The agent does not link libmosquitto: it loads libmosquitto.so.1 (and with
// it libssl and libcrypto, about 2 MiB resident) only when a config has a
// fleet section, through bleagent_mosquitto_load(). The header still gives
// the types, constants and prototypes, so every function in the table has
// the exact type libmosquitto declares.
#ifndef BLEAGENT_CMOSQUITTO_H
#define BLEAGENT_CMOSQUITTO_H
#include <mosquitto.h>
#include <mqtt_protocol.h>

/// Every libmosquitto function the fleet calls, as `F(name)` for each.
#define BLEAGENT_MOSQUITTO_FUNCTIONS(F)                                                       \
    F(mosquitto_lib_init) F(mosquitto_strerror) F(mosquitto_new) F(mosquitto_destroy)        \
    F(mosquitto_int_option) F(mosquitto_will_set) F(mosquitto_username_pw_set)               \
    F(mosquitto_tls_set) F(mosquitto_connect_async) F(mosquitto_disconnect)                   \
    F(mosquitto_socket) F(mosquitto_want_write) F(mosquitto_loop_read)                        \
    F(mosquitto_loop_write) F(mosquitto_loop_misc) F(mosquitto_publish_v5)                    \
    F(mosquitto_subscribe) F(mosquitto_reason_string) F(mosquitto_connect_v5_callback_set)    \
    F(mosquitto_disconnect_v5_callback_set) F(mosquitto_publish_v5_callback_set)              \
    F(mosquitto_subscribe_v5_callback_set) F(mosquitto_message_v5_callback_set)               \
    F(mosquitto_property_add_binary) F(mosquitto_property_read_string)                        \
    F(mosquitto_property_read_binary) F(mosquitto_property_free_all)

#define BLEAGENT_MOSQUITTO_FIELD(name) __typeof__(name) *_Nonnull name;

/// The libmosquitto functions the fleet calls, resolved from libmosquitto.so.1;
/// each field has the type mosquitto.h declares for the function of its name.
struct bleagent_mosquitto {
    BLEAGENT_MOSQUITTO_FUNCTIONS(BLEAGENT_MOSQUITTO_FIELD)
};

/// Loads libmosquitto.so.1 and resolves every function of the table, once
/// per process (later calls return the first outcome). Returns NULL when the
/// library or one of its functions cannot be found; then `*error` (when
/// `error` is not NULL) points to a static text that says why.
const struct bleagent_mosquitto *_Nullable bleagent_mosquitto_load(const char *_Nullable *_Nullable error);

#endif
