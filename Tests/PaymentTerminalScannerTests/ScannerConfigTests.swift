import JSON
import PaymentTerminalScanner
import RoleKit
import Testing

@Suite("Scanner config (roles.central.config)")
struct ScannerConfigTests {
    @Test(
        "the fields set the selection policy, the payment deadline and the journal's name; absent fields keep the defaults"
    )
    func fields() throws {
        let config = try ScannerConfig(
            json: try JSON(
                parsing:
                    #"{"rssiThreshold": -70, "margin": 4, "dwell": 2.5, "paymentDeadlineSeconds": 12, "requerySeconds": 2, "settle": 0.5, "journal": "lane.log"}"#
            ))
        #expect(config.policy.thresholdDBm == -70)
        #expect(config.policy.marginDB == 4)
        #expect(config.policy.dwell == .milliseconds(2500))
        #expect(config.policy.settle == .milliseconds(500))
        #expect(ScannerConfig().policy.settle == .seconds(1))
        #expect(config.paymentDeadlineSeconds == 12)
        #expect(config.requerySeconds == 2)
        #expect(ScannerConfig().requerySeconds == 5)
        #expect(config.journal == "lane.log")
        let defaults = try ScannerConfig(json: .null)
        #expect(defaults == ScannerConfig())
        #expect(try ScannerConfig(json: JSON(parsing: "{}")) == ScannerConfig())
    }

    @Test("an unknown field, a value out of range or a journal name with a path is an error naming the field")
    func errors() throws {
        let cases: [(String, String)] = [
            (#"{"rssi": -70}"#, "rssi"),
            (#"{"rssiThreshold": "near"}"#, "rssiThreshold"),
            (#"{"margin": -1}"#, "margin"),
            (#"{"paymentDeadlineSeconds": 0}"#, "paymentDeadlineSeconds"),
            (#"{"requerySeconds": 0}"#, "requerySeconds"),
            (#"{"settle": 61}"#, "settle"),
            (#"{"journal": "../escape"}"#, "journal"),
            (#"[1]"#, ""),
        ]
        for (text, path) in cases {
            let error = #expect(throws: JSONFieldErrors.self, "\(text)") {
                try ScannerConfig(json: JSON(parsing: text))
            }
            #expect(error?.errors.map(\.path) == [path], "\(text)")
        }
    }

    @Test("every problem is reported, not just the first, each with its path")
    func everyError() throws {
        let error = #expect(throws: JSONFieldErrors.self) {
            try ScannerConfig(
                json: JSON(parsing: #"{"margin": "six", "dwell": -1, "colour": "red", "journal": "../x"}"#))
        }
        #expect(error?.errors.map(\.path) == ["colour", "margin", "dwell", "journal"])
        #expect(
            error?.errors.first { $0.path == "margin" }?.message
                == #"expected a number from 0 to 60, found the string "six""#)
        let check = PluginDescriptor.checking(ScannerConfig.init(json:))
        #expect(check(["journal": "ok.log"], .central).isEmpty)
        #expect(check(["journal": "a/b"], .central).map(\.path) == ["journal"])
    }
}
