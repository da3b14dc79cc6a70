// Loads libmosquitto.so.1 at run time (see include/CMosquitto.h for why).
#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static struct bleagent_mosquitto table;
static const struct bleagent_mosquitto *loaded;
static const char *failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        failure = "libmosquitto.so.1 cannot be loaded (Debian package libmosquitto1)";
        return;
    }
#define RESOLVE(name)                                                                  \
    table.name = (__typeof__(name) *)dlsym(library, #name);                            \
    if (table.name == NULL) {                                                          \
        failure = "libmosquitto.so.1 lacks " #name " (libmosquitto 2.0 or later is needed)"; \
        return;                                                                        \
    }
    BLEAGENT_MOSQUITTO_FUNCTIONS(RESOLVE)
#undef RESOLVE
    loaded = &table;
}

const struct bleagent_mosquitto *bleagent_mosquitto_load(const char **error) {
    pthread_once(&once, load);
    if (loaded == NULL && error != NULL) *error = failure;
    return loaded;
}
