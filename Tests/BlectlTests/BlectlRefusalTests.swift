import BLETesting
import Glibc
import IO
import JSON
import Testing

@testable import blectl

/// blectl refused by the agent: it prints the agent's -32002 message, not
/// the write error ("Broken pipe") that follows the agent closing the
/// connection.
@Suite("blectl reports the agent's refusal", .serialized, .timeLimit(.minutes(2)))
struct BlectlRefusalTests {
    /// A listening socket that a test accepts on by hand, so it can refuse a
    /// client (write the error line, close) before the client sends anything.
    final class RefusingListener {
        let path: String
        let fd: Int32
        let directory = makeTemporaryDirectory()

        init() {
            path = "\(directory)/control.sock"
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            listen(fd, 4)
        }

        deinit {
            close(fd)
            removeTree(directory)
        }

        /// Accepts the pending connection, writes the refusal as the agent does, and closes it.
        func refuseNext() {
            // Close-on-exec, so that no child spawned meanwhile keeps the connection open after the close below.
            guard let accepted = try? FileDescriptor(rawValue: fd).accept() else { return }
            let client = accepted.rawValue
            let line =
                #"{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"uid 0 is not allowed (control.allowedUids)"}}"#
                + "\n"
            _ = Array(line.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }

    @Test("refused and closed before blectl writes its request: the refusal, not 'Broken pipe'")
    func refusedBeforeTheWrite() throws {
        let listener = RefusingListener()
        let client = try ControlClient(path: listener.path)
        listener.refuseNext()
        do {
            _ = try client.call("agent.status")
            Issue.record("the call succeeded")
        } catch {
            guard case .unreachable(let reason) = error else {
                Issue.record("not unreachable: \(error)")
                return
            }
            #expect(reason.contains("uid 0 is not allowed (control.allowedUids)"), "\(reason)")
            #expect(reason.contains("-32002"), "\(reason)")
            #expect(!reason.contains("Broken pipe"), "\(reason)")
        }
    }

    @Test("against a real agent that does not allow the caller's uid, every run prints the -32002 message (exit 69)")
    func realAgentRefusal() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", extra: #", "allowedUids": [4242]"#))
        for run in 1...20 {
            let result = try await blectl(["--socket", agent.socketPath, "status"])
            #expect(result.status == 69, "run \(run): \(result)")
            #expect(
                result.stderr
                    == "blectl: agent unreachable: the agent refused the connection: uid \(geteuid()) is not allowed (control.allowedUids) (-32002)\n",
                "run \(run)")
        }
        #expect(await agent.stop().status == 0)
    }
}
