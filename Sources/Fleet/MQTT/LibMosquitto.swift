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

/// A libmosquitto error code (`MOSQ_ERR_*`) with libmosquitto's own words.
struct MosquittoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `MOSQ_ERR_*` value.
    let code: Int32
    /// What was being done.
    let operation: String

    /// `operation: mosquitto_strerror(code)`; for `MOSQ_ERR_ERRNO` the errno's text.
    var description: String {
        "\(operation): \(String(cString: mosquitto_strerror(code)))"
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

    private static let initialised: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

    /// A client with `clientID`, a clean session, speaking `version`.
    init(clientID: String, protocolVersion: Int32, callbacks: MosquittoCallbacks) throws(MosquittoError) {
        guard Self.initialised else { throw MosquittoError(code: MOSQ_ERR_UNKNOWN.rawValue, operation: "init") }
        self.callbacks = callbacks
        let context = Unmanaged.passUnretained(callbacks).toOpaque()
        guard let handle = mosquitto_new(clientID, true, context) else {
            throw MosquittoError(code: MOSQ_ERR_ERRNO.rawValue, operation: "mosquitto_new")
        }
        self.handle = handle
        try MosquittoError.check(
            mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, protocolVersion), "protocol version")
        // No broker-side limit on our side: the outbox bounds what is in flight.
        _ = mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, 65535)
        Self.installCallbacks(handle)
    }

    deinit { mosquitto_destroy(handle) }

    private static func callbacks(_ obj: UnsafeMutableRawPointer?) -> MosquittoCallbacks? {
        obj.map { Unmanaged<MosquittoCallbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func installCallbacks(_ handle: OpaquePointer) {
        mosquitto_connect_v5_callback_set(handle) { _, obj, reason, _, _ in
            MosquittoClient.callbacks(obj)?.connected(reason)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, obj, reason, _ in
            MosquittoClient.callbacks(obj)?.disconnected(reason)
        }
        mosquitto_publish_v5_callback_set(handle) { _, obj, mid, reason, _ in
            MosquittoClient.callbacks(obj)?.published(mid, reason)
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, obj, mid, count, granted, _ in
            let list = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            MosquittoClient.callbacks(obj)?.subscribed(mid, list)
        }
        mosquitto_message_v5_callback_set(handle) { _, obj, message, properties in
            guard let message, let callbacks = MosquittoClient.callbacks(obj) else { return }
            callbacks.message(MosquittoClient.copy(message.pointee, properties))
        }
    }

    private static func copy(_ message: mosquitto_message, _ properties: OpaquePointer?) -> MQTTMessage {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let count = Int(message.payloadlen)
        let payload: [UInt8] =
            count > 0 && message.payload != nil
            ? Array(UnsafeRawBufferPointer(start: message.payload, count: count)) : []
        var responseTopic: String?
        var correlation: [UInt8]?
        if let properties {
            var text: UnsafeMutablePointer<CChar>?
            if mosquitto_property_read_string(properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false)
                != nil, let text
            {
                responseTopic = String(cString: text)
                free(text)
            }
            var bytes: UnsafeMutableRawPointer?
            var length: UInt16 = 0
            if mosquitto_property_read_binary(
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
            mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain)
        }
        try MosquittoError.check(code, "will")
    }

    /// Sets the username and password (before connecting).
    func setCredentials(username: String, password: String) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_username_pw_set(handle, username, password), "credentials")
    }

    /// Turns on TLS with `caFile` (nil: the system's CAs) and an optional client certificate.
    func setTLS(caFile: String?, certificateFile: String?, keyFile: String?) throws(MosquittoError) {
        if caFile == nil {
            try MosquittoError.check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "system CAs")
        }
        let code = mosquitto_tls_set(
            handle, caFile, caFile == nil ? "/etc/ssl/certs" : nil, certificateFile, keyFile, nil)
        try MosquittoError.check(code, "TLS settings")
    }

    /// Starts connecting to `host:port` (port 0: `host` is a Unix socket
    /// path). Resolves the name and starts the TCP connect: blocking, so it
    /// runs on the blocking thread (rule 1). TLS and CONNECT proceed in the loop calls.
    func connect(host: String, port: Int, keepalive: Int) throws(MosquittoError) {
        try MosquittoError.check(
            mosquitto_connect_async(handle, host, Int32(port), Int32(keepalive)), "connect to \(host)")
    }

    /// The socket to watch, or -1 when not connected.
    var socket: Int32 { mosquitto_socket(handle) }

    /// Whether libmosquitto has bytes waiting to be written.
    var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what the socket has and runs the callbacks it causes.
    func loopRead() -> Int32 { mosquitto_loop_read(handle, 1) }

    /// Writes what it can.
    func loopWrite() -> Int32 { mosquitto_loop_write(handle, 1) }

    /// Keepalive pings and retries; call at least once a second.
    func loopMisc() -> Int32 { mosquitto_loop_misc(handle) }

    /// Queues a PUBLISH; returns its message id. `correlation` is MQTT 5's correlation data.
    func publish(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, correlation: [UInt8]? = nil
    ) throws(MosquittoError) -> Int32 {
        var mid: Int32 = 0
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let correlation {
            let added = correlation.withUnsafeBytes {
                mosquitto_property_add_binary(
                    &properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), $0.baseAddress, UInt16($0.count))
            }
            try MosquittoError.check(added, "correlation data")
        }
        let code = payload.withUnsafeBytes {
            mosquitto_publish_v5(
                handle, &mid, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain, properties)
        }
        try MosquittoError.check(code, "publish to \(topic)")
        return mid
    }

    /// Subscribes to `topic`; returns the message id of the SUBSCRIBE.
    func subscribe(_ topic: String, qos: Int) throws(MosquittoError) -> Int32 {
        var mid: Int32 = 0
        try MosquittoError.check(mosquitto_subscribe(handle, &mid, topic, Int32(qos)), "subscribe to \(topic)")
        return mid
    }

    /// Sends DISCONNECT (the Last Will is not published).
    func disconnect() { _ = mosquitto_disconnect(handle) }

    /// The broker's words for a CONNACK or reason code.
    static func reasonText(_ code: Int32) -> String {
        String(cString: mosquitto_reason_string(code))
    }

    /// MQTT 5's "not authorized" reason code (0x87).
    static let notAuthorized: Int32 = Int32(MQTT_RC_NOT_AUTHORIZED.rawValue)
}
