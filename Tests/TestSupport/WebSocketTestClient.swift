import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A WebSocket client over NIO's own upgrader, for tests through the gateway: it connects,
/// upgrades `path`, and hands back the frames' channel (nil when the server did not upgrade).
package enum WebSocketTestClient {
    /// A client's frame: masked, as RFC 6455 requires of clients.
    package static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer, fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, maskKey: .random(), data: data)
    }

    /// A client's close with `code`.
    package static func close(code: UInt16) -> WebSocketFrame {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        return frame(.connectionClose, payload)
    }

    /// The code of a received close frame (nil when it carries none).
    package static func code(of frame: WebSocketFrame) -> UInt16? {
        frame.unmaskedData.getInteger(at: frame.unmaskedData.readerIndex, as: UInt16.self)
    }

    /// How long the answer to an upgrade may take: a bound on a hang.
    static let upgradeBound = TimeAmount.seconds(120)

    /// Connects to `port` on the loopback and upgrades `path`; `receiveBuffer` fixes the
    /// socket's receive buffer (no autotuning), so a client that stops reading pushes back soon.
    /// A server that leaves the upgrade unanswered past ``upgradeBound``, or a cancelled task,
    /// closes the connection and fails the call.
    package static func connect(
        port: Int, path: String, receiveBuffer: Int? = nil
    ) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame>? {
        var bootstrap = ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup)
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        let connected: (any Channel, EventLoopFuture<NIOAsyncChannel<WebSocketFrame, WebSocketFrame>?>) =
            try await bootstrap.connect(
                host: "127.0.0.1", port: port
            ) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<NIOAsyncChannel<WebSocketFrame, WebSocketFrame>?>(
                        maxFrameSize: 1 << 20,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                            }
                        })
                    let head = HTTPRequestHead(
                        version: .http1_1, method: .GET, uri: path,
                        headers: ["host": "127.0.0.1:\(port)", "content-length": "0"])
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.close(promise: nil)
                            return channel.eventLoop.makeSucceededFuture(nil)
                        })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // Frames the server sends at once may arrive with the 101 answer: keep them.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return (
                        channel,
                        try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                            configuration: pipeline)
                    )
                }
            }
        let (connection, outcome) = connected
        // Closing the connection fails the upgrade, which is all that ends its wait.
        let deadline = connection.eventLoop.scheduleTask(in: upgradeBound) { connection.close(promise: nil) }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.get()
        } onCancel: {
            connection.close(promise: nil)
        }
    }

    /// Sends an upgrade request for `path` on a connection of its own and reads the answer until
    /// the server closes: status and body, for upgrades the server refuses.
    package static func refusal(port: Int, path: String) async throws -> (status: Int, body: String) {
        let channel = try await ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup).connect(
            host: "127.0.0.1", port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        let answer = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(
                    string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                        + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"))
            // Bounded: a server that never closes fails the call rather than holding the test.
            return try await RawConnection.Inbound(stream: inbound).untilClosed()
        }
        let parts = answer.components(separatedBy: "\r\n\r\n")
        let status = parts[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
