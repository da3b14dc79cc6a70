import BLE
import GATT
import Glibc
import JSON
import PaymentTerminalProfile
import RoleKit

extension ScannerEngine {
    /// pos.pay: journal `accepted` (synced) before anything is sent, write the
    /// request (again while the terminal answers busy, within the deadline),
    /// journal `sent`, wait for the final status up to the deadline.
    func pay(_ params: PosPayParams) async throws(PluginMethodError) -> JSON {
        guard let session = link?.session else {
            throw table.selected == nil
                ? PosError.noTerminal()
                : PluginMethodError(code: 1001, "the selected terminal is not connected yet")
        }
        let id = TransactionID.random()
        guard let request = params.request(id: id) else { throw .invalidParams("params: not a valid payment") }
        CrashHook.point(.beforeAccepted, reference: request.reference)
        do {
            try await record(
                .accepted(request, terminal: session.terminalID, atMilliseconds: Self.epochMilliseconds()))
        } catch {
            throw PosError.journalUnavailable("\(error)")
        }
        if let entry = state.payments[id], let refusal = await publishDurably(entry, admission: .opening) {
            // Not sent and the back office cannot know: settled failed (that final may use the reserve).
            try? await record(.final(TransactionStatus(transactionID: id, state: .failed, reason: .none)))
            throw PosError.backOfficeUnavailable(id, why: "\(refusal)")
        }
        CrashHook.point(.afterAccepted, reference: request.reference)
        // Amounts, references and auth codes are logged at debug only (docs/logging.md).
        logger.info("payment \(id): accepted")
        logger.debug("payment \(id): \(request.amount) \(request.currency) \"\(request.reference)\"")
        let (outcomes, waiter) = AsyncStream<PaymentOutcome>.makeStream(bufferingPolicy: .unbounded)
        waiters[id] = waiter
        defer { waiters[id] = nil }
        let deadline = ContinuousClock.now + .milliseconds(Int64(config.paymentDeadlineSeconds * 1000))
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            waiter.yield(.lost("deadline passed"))
        }
        defer { timer.cancel() }
        try await send(request, on: session, until: deadline, waiter: waiter)
        var outcome = PaymentOutcome.lost("agent stopping")
        for await next in outcomes {
            outcome = next
            break
        }
        if case .lost(let why) = outcome, state.payments[id]?.phase != .final {
            try? await record(.reconciling(id, why: why))
            logger.warning("payment \(id): outcome unknown (\(why)); reconciling")
            throw PosError.paymentUnknown(id, why: why)
        }
        guard let entry = state.payments[id] else { throw PosError.paymentUnknown(id, why: "not in the journal") }
        return posPaymentJSON(entry)
    }

    /// Writes a payment's request: journals `sent` when the terminal takes
    /// it; writes it again after a pause while the terminal answers busy
    /// (0x83) and the deadline allows; settles it `failed` and throws 1004
    /// on a refusal; tells `waiter` the outcome is unknown on any other error.
    private func send(
        _ request: PaymentRequest, on session: TerminalSession, until deadline: ContinuousClock.Instant,
        waiter: AsyncStream<PaymentOutcome>.Continuation
    ) async throws(PluginMethodError) {
        let id = request.transactionID
        var pause = Duration.milliseconds(100)
        while true {
            do {
                try await session.peripheral.writeValue(
                    request.encoded(), for: session.paymentRequest, type: .withResponse)
                CrashHook.point(.afterWrite, reference: request.reference)
                if state.payments[id]?.phase != .final {
                    try? await record(.sent(id, attempt: 1))
                    CrashHook.point(.afterSent, reference: request.reference)
                }
                return
            } catch {
                guard case .notPermitted(let att) = error.code else {
                    waiter.yield(.lost("write failed: \(error)"))
                    return
                }
                switch ReconciliationPlanner.step(for: id, in: state, writeError: att) {
                case .settle(let final):
                    try? await record(final)
                    logger.warning("payment \(id): the terminal refused it (ATT \(att))")
                    throw PosError.terminalRefused(id, code: att.rawValue)
                case .retryLater where ContinuousClock.now + pause < deadline:
                    logger.info("payment \(id): the terminal is busy; writing it again in \(pause)")
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .seconds(2))
                    guard link?.session?.terminalID == session.terminalID else {
                        waiter.yield(.lost("link lost"))
                        return
                    }
                case .retryLater:
                    waiter.yield(.lost("the terminal stayed busy until the deadline"))
                    return
                case .reconcile, .ignore:
                    waiter.yield(.lost("write failed: \(error)"))
                    return
                }
            }
        }
    }

    /// A Transaction Status indication from the terminal `terminalID`.
    func received(_ value: [UInt8], from terminalID: String) async {
        let status: TransactionStatus
        do {
            status = try TransactionStatus(decoding: value)
        } catch {
            logger.warning("terminal \(terminalID) sent a bad Transaction Status: \(error)")
            return
        }
        let id = status.transactionID
        switch ReconciliationPlanner.step(for: id, in: state, answer: status, from: terminalID) {
        case .settle(let final):
            CrashHook.point(.beforeFinal, reference: state.payments[id]?.request.reference)
            do {
                try await record(final)
            } catch {
                logger.error("payment \(id): cannot journal the final status: \(error)")
                return
            }
            logger.info("payment \(id): \(status.state)")
            if let code = status.authorizationCode { logger.debug("payment \(id): authorization code \(code)") }
            waiters[id]?.yield(.final)
        case .resend(let request, let attempt):
            guard let session = link?.session, session.terminalID == terminalID else { return }
            logger.info("payment \(id): the terminal never received it; sending it again (attempt \(attempt))")
            do {
                try await session.peripheral.writeValue(
                    request.encoded(), for: session.paymentRequest, type: .withResponse)
                if state.payments[id]?.phase != .final { try? await record(.sent(id, attempt: attempt)) }
            } catch {
                logger.warning("payment \(id): resending failed: \(error)")
            }
        case .wait, .ignore:
            return
        }
    }

    /// Queries every unsettled payment of `terminalID` by its transaction id.
    func reconcile(terminalID: String) async {
        let ids = ReconciliationPlanner.queries(in: state, terminal: terminalID)
        lastQueries = now
        guard !ids.isEmpty else { return }
        logger.info("reconciling \(ids.count) payment(s) with terminal \(terminalID)")
        await query(ids, terminalID: terminalID)
    }

    /// Every `requerySeconds` while connected, queries again the unsettled
    /// payments no pos.pay is waiting for: an answer lost on the way, a resend
    /// the terminal refused as busy, a final indication missed would otherwise
    /// wait for the next reconnection.
    func requeryIfDue() {
        guard !requerying, let terminalID = link?.session?.terminalID,
            now - lastQueries >= .milliseconds(Int64(config.requerySeconds * 1000))
        else { return }
        let ids = ReconciliationPlanner.queries(in: state, terminal: terminalID).filter { waiters[$0] == nil }
        guard !ids.isEmpty else { return }
        requerying = true
        lastQueries = now
        logger.info("querying \(ids.count) unsettled payment(s) again with terminal \(terminalID)")
        Task {
            await self.query(ids, terminalID: terminalID)
            self.requeryDone()
        }
    }

    private func requeryDone() {
        requerying = false
        lastQueries = now
    }

    private func query(_ ids: [TransactionID], terminalID: String) async {
        for id in ids {
            guard let session = link?.session, session.terminalID == terminalID else { return }
            do {
                try await session.peripheral.writeValue(
                    StatusQuery(transactionID: id).encoded(), for: session.statusQuery, type: .withResponse)
            } catch {
                logger.warning("payment \(id): status query failed: \(error)")
            }
        }
    }

    /// pos.terminals.
    func terminalsJSON() -> JSON { posTerminalsJSON(table) }

    /// pos.transactions.
    func transactionsJSON(_ params: PosTransactionsParams) -> JSON { params.result(state) }

    /// pos.select: pin a terminal named by id, terminal id or advertised name.
    func select(_ params: PosSelectParams) throws(PluginMethodError) -> JSON {
        guard let key = table.resolve(params.terminal) else { throw PosError.unknownTerminal(params.terminal) }
        let before = table.selected
        _ = table.select(key, at: now)
        choiceMayHaveChanged(from: before)
        return posTerminalsJSON(table)["terminals"]?.arrayValue?.first { $0["id"] == .string(key) } ?? .null
    }

    /// pos.release: drop the choice until the next select.
    func release() -> JSON {
        let before = table.selected
        table.release()
        choiceMayHaveChanged(from: before)
        return ["selected": .null]
    }

    static func epochMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
