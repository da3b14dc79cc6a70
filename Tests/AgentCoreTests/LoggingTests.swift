import AgentCore
import Testing

@Suite("the agent's log: levels, format, escaping, rate limit")
struct LoggingTests {
    @Test("control characters, separators and bidi overrides are escaped; other text is kept")
    func escaping() {
        #expect(LogText.escaped("plain text, é, 😀") == "plain text, é, 😀")
        #expect(LogText.escaped("a\nbleagent: forged") == #"a\nbleagent: forged"#)
        #expect(LogText.escaped("\r\t\u{1B}[2J\u{7F}\u{0}") == #"\r\t\x1b[2J\x7f\x00"#)
        #expect(LogText.escaped("\u{85}x\u{2028}y\u{202E}z") == #"\x85x\u{2028}y\u{202e}z"#)
    }

    @Test("info lines carry no level word, others do, plugin lines name the plugin; below the threshold nothing")
    func format() {
        let writer = LogWriter(threshold: .info, journal: false)
        #expect(writer.line(LogEntry(level: .info, message: "listening")) == "bleagent: listening\n")
        #expect(writer.line(LogEntry(level: .notice, message: "refused")) == "bleagent: notice: refused\n")
        #expect(
            writer.line(LogEntry(level: .warning, plugin: "Scan\nner", message: "x\ny"))
                == "bleagent: [Scan\\nner] warning: x\\ny\n")
        #expect(writer.line(LogEntry(level: .debug, message: "amount 4711")) == nil)
        let debug = LogWriter(threshold: .debug, journal: true)
        #expect(debug.line(LogEntry(level: .debug, message: "amount 4711")) == "<7>bleagent: debug: amount 4711\n")
        #expect(debug.line(LogEntry(level: .error, message: "e")) == "<3>bleagent: error: e\n")
        #expect(LogLevel(name: "notice") == .notice && LogLevel(name: "loud") == nil)
    }

    @Test("a burst per window is written; the next line written says how many were not")
    func rateLimit() {
        var limit = LogRateLimit(burst: 2, window: .seconds(60))
        let start = ContinuousClock.now
        #expect(limit.admit(at: start) == 0)
        #expect(limit.admit(at: start + .seconds(1)) == 0)
        #expect(limit.admit(at: start + .seconds(2)) == nil)
        #expect(limit.admit(at: start + .seconds(3)) == nil)
        #expect(limit.admit(at: start + .seconds(61)) == 2, "a new window: two were not written")
        #expect(limit.admit(at: start + .seconds(62)) == 0)
    }
}
