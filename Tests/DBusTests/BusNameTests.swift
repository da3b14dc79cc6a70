import BLETesting
import DBus
import Testing

@Suite("Bus names")
struct BusNameTests {
    @Test("RequestName reply codes, ownership queries and ReleaseName")
    func requestAndRelease() async throws {
        try await PrivateBus.with { bus in
            let first = try await bus.connect()
            let second = try await bus.connect()
            let name = "org.bleagent.Named"
            #expect(try await first.nameHasOwner(name) == false)
            #expect(try await first.getNameOwner(name) == nil)
            #expect(try await first.requestName(name) == .primaryOwner)
            #expect(try await first.requestName(name) == .alreadyOwner)
            #expect(try await second.requestName(name) == .exists)
            #expect(try await second.requestName(name, flags: []) == .inQueue)
            #expect(try await second.getNameOwner(name) == first.uniqueName)
            #expect(try await second.releaseName("org.bleagent.Other") == .nonExistent)
            #expect(try await first.releaseName(name) == .released)
            #expect(try await first.getNameOwner(name) == second.uniqueName)
            #expect(try await first.releaseName(name) == .notOwner)
            await first.close()
            await second.close()
        }
    }

    @Test("NameOwnerChanged reports a name taken, handed over when its owner exits, and released")
    func ownerChanges() async throws {
        try await PrivateBus.with { bus in
            let watcher = try await bus.connect()
            let service = try await bus.connect()
            let successor = try await bus.connect()
            let name = "org.bleagent.Service"
            let changes = try await watcher.nameOwnerChanges(of: name)
            var iterator = changes.makeAsyncIterator()
            #expect(try await service.requestName(name) == .primaryOwner)
            #expect(await iterator.next() == NameOwnerChange(name: name, oldOwner: nil, newOwner: service.uniqueName))
            #expect(try await successor.requestName(name, flags: []) == .inQueue)
            let serviceName = service.uniqueName
            await service.close()
            #expect(
                await iterator.next()
                    == NameOwnerChange(name: name, oldOwner: serviceName, newOwner: successor.uniqueName))
            #expect(try await successor.releaseName(name) == .released)
            #expect(await iterator.next() == NameOwnerChange(name: name, oldOwner: successor.uniqueName, newOwner: nil))
            await watcher.close()
            await successor.close()
        }
    }
}
