import GATT
import Testing

@testable import BLE

@Suite struct SubscriptionSetTests {
    let peripheral = PeripheralIdentifier(
        adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
    var heartRate: CharacteristicReference {
        CharacteristicReference(peripheral: peripheral, service: .heartRate, characteristic: .heartRateMeasurement)
    }
    var battery: CharacteristicReference {
        CharacteristicReference(peripheral: peripheral, service: .battery, characteristic: .batteryLevel)
    }

    @Test func everyReconnectRestoresEachSubscriptionExactlyOnce() {
        var set = SubscriptionSet()
        let (first, none) = set.linkUp(peripheral)
        #expect(none.isEmpty)
        let result1 = set.subscribe(heartRate)
        #expect(result1, "connected: start now")
        set.started(heartRate, generation: first)
        let result2 = set.subscribe(battery)
        #expect(result2)
        set.started(battery, generation: first)
        let result3 = set.subscribe(heartRate)
        #expect(!result3, "already wanted: not started twice")
        set.linkDown(peripheral)
        #expect(set.status(of: heartRate) == .inactive)
        let (second, toStart) = set.linkUp(peripheral)
        #expect(second != first)
        #expect(toStart == [heartRate, battery].sorted())
        #expect(set.linkUp(peripheral).toStart.isEmpty, "a doubled link-up signal restores nothing again")
        set.started(heartRate, generation: second)
        #expect(set.status(of: heartRate) == .active(generation: second))
    }

    @Test func aSubscriptionWantedWhileDisconnectedStartsOnTheNextLink() {
        var set = SubscriptionSet()
        let result4 = set.subscribe(heartRate)
        #expect(!result4)
        #expect(set.linkUp(peripheral).toStart == [heartRate])
    }

    @Test func aConfirmationFromAnOlderLinkIsIgnored() {
        var set = SubscriptionSet()
        let (old, _) = set.linkUp(peripheral)
        _ = set.subscribe(heartRate)
        set.linkDown(peripheral)
        let (current, _) = set.linkUp(peripheral)
        set.started(heartRate, generation: old)
        #expect(set.status(of: heartRate) == .starting(generation: current))
    }

    @Test func aFailedStartCanBeRetriedOnTheSameLink() {
        var set = SubscriptionSet()
        let (generation, _) = set.linkUp(peripheral)
        _ = set.subscribe(heartRate)
        let result5 = set.startFailed(heartRate, generation: generation)
        #expect(result5)
        #expect(set.retry(heartRate) == generation)
        #expect(set.retry(heartRate) == nil, "already starting")
    }

    @Test func unsubscribingForgetsAndSaysWhetherStopIsDue() {
        var set = SubscriptionSet()
        _ = set.subscribe(heartRate)
        let result6 = set.unsubscribe(heartRate)
        #expect(!result6, "never started: no StopNotify")
        _ = set.linkUp(peripheral)
        _ = set.subscribe(heartRate)
        let result7 = set.unsubscribe(heartRate)
        #expect(result7)
        #expect(set.references.isEmpty)
        set.linkDown(peripheral)
        #expect(set.linkUp(peripheral).toStart.isEmpty)
    }
}
