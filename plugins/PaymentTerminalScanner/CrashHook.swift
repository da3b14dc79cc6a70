import Glibc

/// A test hook: SIGKILL the agent at one named step of one payment, so that
/// the crash tests (Tests/BlectlTests/PaymentTerminalCrashTests.swift) can
/// crash it exactly where no outside observer can aim. Armed only by the
/// environment variable `BLEAGENT_POS_CRASH_AT=STEP:REFERENCE` (the step's
/// raw value, a colon, the payment's reference); without it every call is a
/// no-op. The kill is a real SIGKILL: no cleanup, no flush, as a power cut.
enum CrashHook {
    /// The steps of a payment's life where the hook can fire.
    enum Step: String, CaseIterable {
        /// pos.pay validated the call, before `accepted` is journalled.
        case beforeAccepted = "before-accepted"
        /// `accepted` is synced, before the Payment Request is written.
        case afterAccepted = "after-accepted"
        /// The terminal acknowledged the write, before `sent` is journalled.
        case afterWrite = "after-write"
        /// `sent` is journalled; the lane waits for the final status.
        case afterSent = "after-sent"
        /// The final status arrived, before `final` is journalled.
        case beforeFinal = "before-final"
    }

    /// The armed step and reference, read once.
    static let armed: (step: Step, reference: String)? = {
        guard let value = getenv("BLEAGENT_POS_CRASH_AT").map({ String(cString: $0) }),
            let colon = value.firstIndex(of: ":"), let step = Step(rawValue: String(value[..<colon]))
        else { return nil }
        return (step, String(value[value.index(after: colon)...]))
    }()

    /// Kills the process when `step` of the payment `reference` is the armed one.
    static func point(_ step: Step, reference: String?) {
        guard let armed, armed.step == step, armed.reference == reference else { return }
        kill(getpid(), SIGKILL)
    }
}
