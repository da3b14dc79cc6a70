import CMosquitto
import Glibc

// The only file that calls libmosquitto (2.0). Ownership, in one place:
// 1. A `struct mosquitto *` is created by `MosquittoClient.init` and destroyed
//    once, by its deinit. One thread uses it at a time: the blocking thread
//    while it connects (DNS, TCP connect), then the event loop only.
// 2. The callbacks' `obj` is an unretained pointer to the client's
//    `MosquittoCallbacks`, which the client keeps alive as long as the handle.
//    Callbacks run inside loop_read/loop_write/loop_misc, on the caller's thread.
// 3. Message and property pointers passed to callbacks are libmosquitto's and
//    valid only during the callback: copied into Swift values there.
// 4. Property lists built here are freed with mosquitto_property_free_all
//    right after the call that reads them (libmosquitto copies them).

/// libmosquitto's functions, loaded when the first client is made: an agent
/// without a fleet section never maps libmosquitto, libssl or libcrypto.
enum LibMosquitto {
    /// The loaded table, or why libmosquitto.so.1 could not be loaded.
    static let loaded: Result<bleagent_mosquitto, MosquittoError> = {
        var failure: UnsafePointer<CChar>?
        guard let table = bleagent_mosquitto_load(&failure) else {
            let why = failure.map { String(cString: $0) } ?? "libmosquitto.so.1 cannot be loaded"
            return .failure(MosquittoError(code: MOSQ_ERR_NOT_SUPPORTED.rawValue, operation: "load", detail: why))
        }
        return .success(table.pointee)
    }()
}

/// A libmosquitto error code (`MOSQ_ERR_*`) with libmosquitto's own words.
struct MosquittoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `MOSQ_ERR_*` value.
    let code: Int32
    /// What was being done.
    let operation: String
    /// Our own words, where libmosquitto has none (it could not be loaded).
    var detail: String? = nil

    /// `operation: mosquitto_strerror(code)`; for `MOSQ_ERR_ERRNO` the errno's text.
    var description: String {
        if let detail { return "\(operation): \(detail)" }
        guard case .success(let library) = LibMosquitto.loaded else { return "\(operation): error \(code)" }
        return "\(operation): \(library.mosquitto_strerror(code).map { String(cString: $0) } ?? "error \(code)")"
    }

    /// Throws unless `code` is `MOSQ_ERR_SUCCESS`.
    static func check(_ code: Int32, _ operation: String) throws(MosquittoError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MosquittoError(code: code, operation: operation) }
    }

    /// `MOSQ_ERR_NO_CONN`, `MOSQ_ERR_CONN_LOST`: the connection is gone.
    var isConnectionLost: Bool {
        code == MOSQ_ERR_NO_CONN.rawValue || code == MOSQ_ERR_CONN_LOST.rawValue
    }
}

/// One message as received: copied out of libmosquitto during the callback.
struct MQTTMessage: Sendable, Hashable {
    /// The topic it was published to.
    var topic: String
    /// The payload bytes.
    var payload: [UInt8]
    /// Whether the broker delivered it as the retained message.
    var retained: Bool
    /// MQTT 5's response topic property, if set.
    var responseTopic: String?
    /// MQTT 5's correlation data property, if set.
    var correlationData: [UInt8]?
}

/// What libmosquitto reports, as closures fixed before connecting.
final class MosquittoCallbacks: Sendable {
    /// CONNACK: the reason code (0 accepted; MQTT 5 reason codes otherwise).
    let connected: @Sendable (Int32) -> Void
    /// The connection ended: 0 when we asked, otherwise why.
    let disconnected: @Sendable (Int32) -> Void
    /// PUBACK/PUBCOMP for `mid`, with its MQTT 5 reason code (below 0x80 is success).
    let published: @Sendable (Int32, Int32) -> Void
    /// A message on a subscribed topic.
    let message: @Sendable (MQTTMessage) -> Void
    /// SUBACK for `mid` with the granted QoS (0x80 and above: refused).
    let subscribed: @Sendable (Int32, [Int32]) -> Void

    init(
        connected: @escaping @Sendable (Int32) -> Void, disconnected: @escaping @Sendable (Int32) -> Void,
        published: @escaping @Sendable (Int32, Int32) -> Void, message: @escaping @Sendable (MQTTMessage) -> Void,
        subscribed: @escaping @Sendable (Int32, [Int32]) -> Void
    ) {
        self.connected = connected
        self.disconnected = disconnected
        self.published = published
        self.message = message
        self.subscribed = subscribed
    }
}

/// One MQTT client handle (`struct mosquitto`). Used by one thread at a time
/// (rule 1), which is why it is `@unchecked Sendable`: the hand-over from
/// the blocking thread to the loop happens once, through the loop's queue.
final class MosquittoClient: @unchecked Sendable {
    private let handle: OpaquePointer
    private let callbacks: MosquittoCallbacks
    private let library: bleagent_mosquitto

    private static let initialised: Result<bleagent_mosquitto, MosquittoError> = LibMosquitto.loaded.flatMap {
        $0.mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue
            ? .success($0) : .failure(MosquittoError(code: MOSQ_ERR_UNKNOWN.rawValue, operation: "init"))
    }

    /// A client with `clientID`, a clean session, speaking `version`. Loads
    /// libmosquitto the first time; throws when it cannot be loaded.
    init(clientID: String, protocolVersion: Int32, callbacks: MosquittoCallbacks) throws(MosquittoError) {
        let library = try Self.initialised.get()
        self.library = library
        self.callbacks = callbacks
        let context = Unmanaged.passUnretained(callbacks).toOpaque()
        guard let handle = library.mosquitto_new(clientID, true, context) else {
            throw MosquittoError(code: MOSQ_ERR_ERRNO.rawValue, operation: "mosquitto_new")
        }
        self.handle = handle
        try MosquittoError.check(
            library.mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, protocolVersion), "protocol version")
        // No broker-side limit on our side: the outbox bounds what is in flight.
        _ = library.mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, 65535)
        Self.installCallbacks(handle, library)
    }

    deinit { library.mosquitto_destroy(handle) }

    private static func callbacks(_ obj: UnsafeMutableRawPointer?) -> MosquittoCallbacks? {
        obj.map { Unmanaged<MosquittoCallbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func installCallbacks(_ handle: OpaquePointer, _ library: bleagent_mosquitto) {
        library.mosquitto_connect_v5_callback_set(handle) { _, obj, reason, _, _ in
            MosquittoClient.callbacks(obj)?.connected(reason)
        }
        library.mosquitto_disconnect_v5_callback_set(handle) { _, obj, reason, _ in
            MosquittoClient.callbacks(obj)?.disconnected(reason)
        }
        library.mosquitto_publish_v5_callback_set(handle) { _, obj, mid, reason, _ in
            MosquittoClient.callbacks(obj)?.published(mid, reason)
        }
        library.mosquitto_subscribe_v5_callback_set(handle) { _, obj, mid, count, granted, _ in
            let list = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            MosquittoClient.callbacks(obj)?.subscribed(mid, list)
        }
        library.mosquitto_message_v5_callback_set(handle) { _, obj, message, properties in
            guard let message, let callbacks = MosquittoClient.callbacks(obj) else { return }
            // A C callback captures nothing: the table is reached through its static.
            guard case .success(let library) = LibMosquitto.loaded else { return }
            callbacks.message(MosquittoClient.copy(message.pointee, properties, library))
        }
    }

    private static func copy(
        _ message: mosquitto_message, _ properties: OpaquePointer?, _ library: bleagent_mosquitto
    ) -> MQTTMessage {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let count = Int(message.payloadlen)
        let payload: [UInt8] =
            count > 0 && message.payload != nil
            ? Array(UnsafeRawBufferPointer(start: message.payload, count: count)) : []
        var responseTopic: String?
        var correlation: [UInt8]?
        if let properties {
            var text: UnsafeMutablePointer<CChar>?
            if library.mosquitto_property_read_string(
                properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false)
                != nil, let text
            {
                responseTopic = String(cString: text)
                free(text)
            }
            var bytes: UnsafeMutableRawPointer?
            var length: UInt16 = 0
            if library.mosquitto_property_read_binary(
                properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &bytes, &length, false) != nil
            {
                correlation = bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                free(bytes)
            }
        }
        return MQTTMessage(
            topic: topic, payload: payload, retained: message.retain, responseTopic: responseTopic,
            correlationData: correlation)
    }

    /// Sets the Last Will (before connecting).
    func setWill(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MosquittoError) {
        let code = payload.withUnsafeBytes {
            library.mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain)
        }
        try MosquittoError.check(code, "will")
    }

    /// Sets the username and password (before connecting).
    func setCredentials(username: String, password: String) throws(MosquittoError) {
        try MosquittoError.check(library.mosquitto_username_pw_set(handle, username, password), "credentials")
    }

    /// Turns on TLS with `caFile` (nil: the system's CAs) and an optional client certificate.
    func setTLS(caFile: String?, certificateFile: String?, keyFile: String?) throws(MosquittoError) {
        if caFile == nil {
            try MosquittoError.check(library.mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "system CAs")
        }
        let code = library.mosquitto_tls_set(
            handle, caFile, caFile == nil ? "/etc/ssl/certs" : nil, certificateFile, keyFile, nil)
        try MosquittoError.check(code, "TLS settings")
    }

    /// Starts connecting to `host:port` (port 0: `host` is a Unix socket
    /// path). Resolves the name and starts the TCP connect: blocking, so it
    /// runs on the blocking thread (rule 1). TLS and CONNECT proceed in the loop calls.
    func connect(host: String, port: Int, keepalive: Int) throws(MosquittoError) {
        try MosquittoError.check(
            library.mosquitto_connect_async(handle, host, Int32(port), Int32(keepalive)), "connect to \(host)")
    }

    /// The socket to watch, or -1 when not connected.
    var socket: Int32 { library.mosquitto_socket(handle) }

    /// Whether libmosquitto has bytes waiting to be written.
    var wantsWrite: Bool { library.mosquitto_want_write(handle) }

    /// Reads what the socket has and runs the callbacks it causes.
    func loopRead() -> Int32 { library.mosquitto_loop_read(handle, 1) }

    /// Writes what it can.
    func loopWrite() -> Int32 { library.mosquitto_loop_write(handle, 1) }

    /// Keepalive pings and retries; call at least once a second.
    func loopMisc() -> Int32 { library.mosquitto_loop_misc(handle) }

    /// Queues a PUBLISH; returns its message id. `correlation` is MQTT 5's correlation data.
    func publish(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, correlation: [UInt8]? = nil
    ) throws(MosquittoError) -> Int32 {
        var mid: Int32 = 0
        var properties: OpaquePointer?
        defer { library.mosquitto_property_free_all(&properties) }
        if let correlation {
            let added = correlation.withUnsafeBytes {
                library.mosquitto_property_add_binary(
                    &properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), $0.baseAddress, UInt16($0.count))
            }
            try MosquittoError.check(added, "correlation data")
        }
        let code = payload.withUnsafeBytes {
            library.mosquitto_publish_v5(
                handle, &mid, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain, properties)
        }
        try MosquittoError.check(code, "publish to \(topic)")
        return mid
    }

    /// Subscribes to `topic`; returns the message id of the SUBSCRIBE.
    func subscribe(_ topic: String, qos: Int) throws(MosquittoError) -> Int32 {
        var mid: Int32 = 0
        try MosquittoError.check(library.mosquitto_subscribe(handle, &mid, topic, Int32(qos)), "subscribe to \(topic)")
        return mid
    }

    /// Sends DISCONNECT (the Last Will is not published).
    func disconnect() { _ = library.mosquitto_disconnect(handle) }

    /// The broker's words for a CONNACK or reason code.
    static func reasonText(_ code: Int32) -> String {
        guard case .success(let library) = LibMosquitto.loaded else { return "reason \(code)" }
        return library.mosquitto_reason_string(code).map { String(cString: $0) } ?? "reason \(code)"
    }

    /// MQTT 5's "not authorized" reason code (0x87).
    static let notAuthorized: Int32 = Int32(MQTT_RC_NOT_AUTHORIZED.rawValue)
}
