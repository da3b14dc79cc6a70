import BLETesting
import Glibc
import SensorAggregator
import Testing

@Suite struct IngestSocketTests {
    /// A queue of 2 with no consumer: the three oldest of five are dropped
    /// and counted, the newest two wait in order.
    @Test func aFullQueueDropsTheOldestAndCountsIt() async {
        let queue = DatagramQueue(limit: 2)
        for name in ["a", "b", "c", "d", "e"] { queue.push(Array(name.utf8)) }
        queue.finish()
        #expect(queue.dropped == 3)
        var waiting: [String] = []
        for await datagram in queue.stream { waiting.append(String(decoding: datagram, as: UTF8.self)) }
        #expect(waiting == ["d", "e"])
    }

    /// Datagrams arrive whole and in order; one longer than maxLineBytes
    /// arrives cut at maxLineBytes + 1 (so the parser calls it tooLong);
    /// nothing overflows; close removes the path.
    @Test func datagramsArriveInOrderAndALongOneIsCut() async throws {
        let directory = TemporaryDirectory()
        defer { removeTree(directory.path) }
        let path = "\(directory.path)/ingest.sock"
        let socket = try IngestSocket(path: path, maxLineBytes: 64, bufferLimit: 8)
        let sizes = [10, 2000, 0, 64]
        for size in sizes {
            #expect(send(path, [UInt8](repeating: 0x61, count: size)) == size)
        }
        var received: [Int] = []
        for await datagram in socket.datagrams {
            received.append(datagram.count)
            if received.count == sizes.count { break }
        }
        #expect(received == [10, 65, 0, 64])
        #expect(socket.overflowed == 0)
        socket.close()
        var info = stat()
        #expect(lstat(path, &info) != 0, "close unlinks the socket path")
    }

    private func send(_ path: String, _ bytes: [UInt8]) -> Int {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        return bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }
}
