// Preloaded into the processes of `scripts/sanitize.sh thread`: tells
// ThreadSanitizer when Swift's Synchronization.Mutex changes hands on Linux.
//
// Mutex's fast paths are atomic compare-exchanges inlined into our
// (instrumented) code, which ThreadSanitizer sees. A contended lock goes
// through _lockSlow, _tryLockSlow and _unlockSlow in libswiftSynchronization.so,
// which is not instrumented: a spin of compare-exchanges, then a
// priority-inheriting futex through which the kernel hands the lock from one
// thread to the next. ThreadSanitizer sees neither, so every access made under
// a contended Mutex is reported as a race (with Swift 6.3.1 a 15-line program of
// four threads appending to an array under one Mutex gets two reports). These
// wrappers, found before the library's own functions because the library is
// preloaded, add the acquire after a slow lock and the release before a slow
// unlock, on the lock word: the address the inlined fast paths use.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

// ThreadSanitizer's annotation interface; weak, so that unsanitized children
// that inherit the preload (dbus-daemon) still load.
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

// The borrowed _MutexHandle is passed by address in the Swift self register.
#define SELF void *__attribute__((swift_context)) handle
typedef __attribute__((swiftcall)) void (*LockSlow)(uint32_t thread, SELF);
typedef __attribute__((swiftcall)) bool (*TryLockSlow)(SELF);
typedef __attribute__((swiftcall)) void (*UnlockSlow)(SELF);

static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

__attribute__((swiftcall)) void lockSlow(uint32_t thread, SELF) __asm__(
    "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF");
__attribute__((swiftcall)) void lockSlow(uint32_t thread, SELF) {
    static LockSlow original;
    if (!original) original = (LockSlow)next("$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF");
    original(thread, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

__attribute__((swiftcall)) bool tryLockSlow(SELF) __asm__("$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF");
__attribute__((swiftcall)) bool tryLockSlow(SELF) {
    static TryLockSlow original;
    if (!original) original = (TryLockSlow)next("$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF");
    bool locked = original(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}

__attribute__((swiftcall)) void unlockSlow(SELF) __asm__("$s15Synchronization12_MutexHandleV11_unlockSlowyyF");
__attribute__((swiftcall)) void unlockSlow(SELF) {
    static UnlockSlow original;
    if (!original) original = (UnlockSlow)next("$s15Synchronization12_MutexHandleV11_unlockSlowyyF");
    if (__tsan_release) __tsan_release(handle);
    original(handle);
}
