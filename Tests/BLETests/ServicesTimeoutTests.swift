import BLE
import BLETesting
import GATT
import Testing

/// A device whose services never resolve: discovering them (and so reading or
/// subscribing through the control API) times out naming what was missing.
@Suite(.timeLimit(.minutes(1))) struct ServicesTimeoutTests {
    @Test func servicesThatNeverResolveTimeOutNamingServicesResolved() async throws {
        let (manager, _, clock) = await CentralManagerTests().poweredOn(connected: true, resolved: false)
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let discovery = Task { () -> Result<[RemoteService], BLEError> in
            do throws(BLEError) { return .success(try await peripheral.discoverServices()) } catch {
                return .failure(error)
            }
        }
        let deadline = clock.now + .seconds(30)
        await clock.waitForSleeper(until: deadline)
        clock.advance(by: .seconds(30))
        guard case .failure(let error) = await discovery.value else {
            Issue.record("discoverServices returned services that never resolved")
            return
        }
        #expect(error.code == .timeout)
        let message = try #require(error.message)
        #expect(message.contains("ServicesResolved stayed false"), "\(message)")
    }
}
