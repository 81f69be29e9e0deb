import Glibc
import NIOCore
import NIOPosix

/// One TCP connection to a local port written to and read from by hand, for clients that
/// misbehave on purpose: trickle a request, stop halfway, vanish.
public enum RawConnection {
    /// Connects to `127.0.0.1:port` and runs `body` with the connection, closing it after.
    public static func with<Result: Sendable>(port: Int, _ body: (Inbound, Outbound) async throws -> Result)
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
    public struct Inbound: Sendable {
        let stream: NIOAsyncChannelInboundStream<ByteBuffer>

        /// Everything the server sends until it closes the connection (or the first `limit` bytes).
        /// A reset counts as a close: a server closing while this client still writes resets.
        public func untilClosed(limit: Int = .max) async throws -> String {
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

    /// What this client sends.
    public struct Outbound: Sendable {
        let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>

        /// Writes `text`; throws once the server has closed the connection.
        public func write(_ text: String) async throws {
            try await write(ByteBuffer(string: text))
        }

        /// Writes `bytes`; throws once the server has closed the connection.
        public func write(_ bytes: ByteBuffer) async throws {
            try await writer.write(bytes)
        }

        /// Ends this side of the connection (a half-close).
        public func finish() {
            writer.finish()
        }
    }
}
