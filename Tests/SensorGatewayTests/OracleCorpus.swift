import BTHomeCrypto
import JSON
import SensorGateway

import struct SimCore.SeededGenerator

/// simcore's seeded generator (SplitMix64): the same corpus on every run.
typealias SplitMix = SeededGenerator

/// One device's packets for the oracle: the address, its bind key, the service data and when each was heard.
struct OracleCase {
    var address: DeviceAddress
    var key: BTHomeBindKey?
    var packets: [(data: [UInt8], time: Double)]

    var json: JSON {
        [
            "address": .string(address.description), "key": key.map { .string(hexOf($0.bytes)) } ?? .null,
            "packets": .array(packets.map { ["data": .string(hexOf($0.data)), "time": .double($0.time)] }),
        ]
    }
}

func hexOf(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// The corpus fed to both decoders: the published vectors, random packets with every object id (valid, out of
/// order, truncated, with unknown ids, with text that is not UTF-8), encrypted ones (right and wrong keys, the MAC
/// in the data, altered bytes), and sequences exercising packet-id de-duplication and encryption counters.
enum OracleCorpus {
    static func make(seed: UInt64) throws -> [OracleCase] {
        var random = SplitMix(seed: seed)
        var cases: [OracleCase] = []
        let zero = DeviceAddress(value: 0)
        for vector in BTHomeDecoderTests.vectors {
            cases.append(OracleCase(address: zero, key: nil, packets: [(bytes(vector.data), 0)]))
        }
        // Every object id on its own, several values each.
        for type in BTHomeObjectType.all {
            for _ in 0..<4 {
                cases.append(OracleCase(address: zero, key: nil, packets: [([0x40] + object(type, &random), 0)]))
            }
        }
        // Random packets of several objects, sometimes damaged.
        for _ in 0..<400 {
            var payload = objects(&random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0: payload = shuffledObjects(&random)
            case 1: if payload.count > 1 { payload.removeLast(Int.random(in: 1..<payload.count, using: &random)) }
            case 2: payload += [UInt8.random(in: 0x66...0xEF, using: &random), 0x01, 0x02]
            default: break
            }
            let info: UInt8 = [0x40, 0x44][Int.random(in: 0..<2, using: &random)]
            cases.append(OracleCase(address: zero, key: nil, packets: [([info] + payload, 0)]))
        }
        // Encrypted packets.
        for index in 0..<150 {
            let address = DeviceAddress(value: UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &random))
            let key = randomKey(&random)
            let counter = UInt32.random(in: 0...UInt32.max, using: &random)
            var data = try BTHomeEncryption.seal(
                objects: objects(&random), deviceInfo: [0x40, 0x44][index % 2], mac: address.bytes, counter: counter,
                key: key, includeMAC: index % 5 == 0)
            var decodingKey: BTHomeBindKey? = key
            switch index % 10 {
            case 7: data[data.count / 2] ^= 0x20
            case 8: decodingKey = randomKey(&random)
            case 9: decodingKey = nil
            default: break
            }
            cases.append(OracleCase(address: address, key: decodingKey, packets: [(data, 0)]))
        }
        // A keyed device sending plain data.
        cases.append(OracleCase(address: zero, key: randomKey(&random), packets: [(bytes("40 02 ca 09"), 0)]))
        // Packet-id sequences: repeats, steps forward and back, gaps of more than four seconds.
        for _ in 0..<40 {
            var id = UInt8.random(in: 0...255, using: &random)
            var time = 1000.0
            var packets: [(data: [UInt8], time: Double)] = []
            for _ in 0..<12 {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: break
                case 1: id &-= UInt8.random(in: 1...3, using: &random)
                case 2: id &+= UInt8.random(in: 60...70, using: &random)
                default: id &+= 1
                }
                time += [0.25, 1, 2, 4.5, 6][Int.random(in: 0..<5, using: &random)]
                packets.append(([0x40, 0x00, id] + objects(&random), time))
            }
            cases.append(OracleCase(address: zero, key: nil, packets: packets))
        }
        // Encryption counter sequences: forward, a packet heard again (the same bytes: a device never reuses a
        // counter for other data), back (above and below 100).
        for _ in 0..<30 {
            let address = DeviceAddress(value: UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &random))
            let key = randomKey(&random)
            var counter = UInt32.random(in: 200...100_000, using: &random)
            var packets: [(data: [UInt8], time: Double)] = []
            var time = 1000.0
            for _ in 0..<10 {
                switch Int.random(in: 0..<6, using: &random) {
                case 0:
                    if let last = packets.last {
                        time += 1
                        packets.append((last.data, time))
                        continue
                    }
                case 1 where counter > 150: counter -= UInt32.random(in: 1...50, using: &random)
                case 2: counter = UInt32.random(in: 0..<100, using: &random)
                default: counter += UInt32.random(in: 1...5, using: &random)
                }
                time += 1
                packets.append(
                    (
                        try BTHomeEncryption.seal(
                            objects: objects(&random), deviceInfo: 0x40, mac: address.bytes, counter: counter, key: key),
                        time
                    ))
            }
            cases.append(OracleCase(address: address, key: key, packets: packets))
        }
        return cases
    }

    static func randomKey(_ random: inout SplitMix) -> BTHomeBindKey {
        BTHomeBindKey(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })!
    }

    /// One object of `type` with a random value.
    static func object(_ type: BTHomeObjectType, _ random: inout SplitMix) -> [UInt8] {
        func some(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        switch type.format {
        case .text:
            let count = Int.random(in: 0...6, using: &random)
            let text =
                Bool.random(using: &random)
                ? (0..<count).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) } : some(count)
            return [type.id, UInt8(count)] + text
        case .raw:
            let count = Int.random(in: 0...6, using: &random)
            return [type.id, UInt8(count)] + some(count)
        case .command:
            let count = Int.random(in: 0...3, using: &random)
            return [type.id, UInt8(count) | (UInt8.random(in: 0...7, using: &random) << 5)] + some(1 + count)
        case .button, .dimmer:
            let code = [0, 1, 2, 3, 4, 5, 6, 0x80, 0x81, 0x7F][Int.random(in: 0..<10, using: &random)]
            return [type.id, UInt8(code)] + some((type.length ?? 1) - 1)
        default:
            var value = some(type.length ?? 1)
            // Binary sensors mostly send 0 or 1.
            if type.kind == .binary, Bool.random(using: &random) { value = [UInt8.random(in: 0...1, using: &random)] }
            return [type.id] + value
        }
    }

    /// 1 to 4 random objects in ascending id order.
    static func objects(_ random: inout SplitMix) -> [UInt8] {
        let count = Int.random(in: 1...4, using: &random)
        let types = (0..<count).map { _ in
            BTHomeObjectType.all.filter { $0.id != 0x00 }.randomElement(using: &random)!
        }.sorted { $0.id < $1.id }
        return types.flatMap { object($0, &random) }
    }

    /// 2 to 4 random objects in random order.
    static func shuffledObjects(_ random: inout SplitMix) -> [UInt8] {
        let types = (0..<Int.random(in: 2...4, using: &random)).map { _ in
            BTHomeObjectType.all.filter { $0.id != 0x00 }.randomElement(using: &random)!
        }
        return types.flatMap { object($0, &random) }
    }
}
