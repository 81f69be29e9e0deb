import Glibc
import NIOCore
import NIOPosix
import ServiceRuntime

/// One TCP connection to a local port written to and read from by hand, for clients that
/// misbehave on purpose: trickle a request, stop halfway, vanish.
package enum RawConnection {
    /// Connects to `127.0.0.1:port` and runs `body` with the connection, closing it after.
    package static func with<Result: Sendable>(port: Int, _ body: (Inbound, Outbound) async throws -> Result)
        async throws -> Result
    {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(Inbound(stream: inbound), Outbound(writer: outbound))
        }
    }

    /// What the server sends.
    package struct Inbound: Sendable {
        let stream: NIOAsyncChannelInboundStream<ByteBuffer>

        /// Everything the server sends until it closes the connection (or the first `limit` bytes).
        /// A reset counts as a close: a server closing while this client still writes resets.
        /// A server that keeps the connection open past `within` fails the read with
        /// ``StillOpen``; the read can be called once.
        package func untilClosed(limit: Int = .max, within bound: Duration = .seconds(120)) async throws -> String {
            let stream = stream
            do {
                return try await withTimeout(bound) { try await Self.read(stream, limit: limit) }
            } catch is TimeoutError {
                throw StillOpen(bound: bound)
            }
        }

        private static func read(_ stream: NIOAsyncChannelInboundStream<ByteBuffer>, limit: Int) async throws -> String
        {
            var received = ByteBuffer()
            do {
                for try await var chunk in stream {
                    received.writeBuffer(&chunk)
                    guard received.readableBytes < limit else { break }
                }
            } catch let error as IOError where error.errnoCode == ECONNRESET {
                return String(buffer: received)
            }
            return String(buffer: received)
        }
    }

    /// The server kept the connection open past the bound of a read until it closes.
    package struct StillOpen: Error, CustomStringConvertible {
        /// The bound.
        package let bound: Duration

        package var description: String { "the server did not close the connection within \(bound)" }
    }

    /// What this client sends.
    package struct Outbound: Sendable {
        let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>

        /// Writes `text`; throws once the server has closed the connection.
        package func write(_ text: String) async throws {
            try await write(ByteBuffer(string: text))
        }

        /// Writes `bytes`; throws once the server has closed the connection.
        package func write(_ bytes: ByteBuffer) async throws {
            try await writer.write(bytes)
        }

        /// Ends this side of the connection (a half-close).
        package func finish() {
            writer.finish()
        }
    }
}
